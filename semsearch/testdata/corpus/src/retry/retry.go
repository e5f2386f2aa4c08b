package retry

import (
	"context"
	"math/rand"
	"time"
)

// Policy says how often and how long to retry a failing operation.
type Policy struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

// Do calls fn until it succeeds, the attempts are used up, or ctx ends.
// Between attempts it waits with exponential backoff and full jitter, so
// that many clients failing together do not retry in lockstep.
func Do(ctx context.Context, p Policy, fn func() error) error {
	var err error
	for i := 0; i < p.Attempts; i++ {
		if err = fn(); err == nil {
			return nil
		}
		wait := p.Base << i
		if wait > p.Max {
			wait = p.Max
		}
		wait = time.Duration(rand.Int63n(int64(wait) + 1))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	return err
}
