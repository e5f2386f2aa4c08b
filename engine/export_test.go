package engine

import "time"

// SetDropRetry changes how batches dial again after a drop, until the
// test ends.
func SetDropRetry(t interface{ Cleanup(func()) }, attempts int, base, max time.Duration) {
	old := dropRetry
	dropRetry = retryPolicy{attempts: attempts, base: base, max: max}
	t.Cleanup(func() { dropRetry = old })
}
