package engine

import (
	"testing"
	"time"
)

// The waits grow from base, stop at max, and stay within ±50% of that.
func TestRetryPolicyWait(t *testing.T) {
	p := retryPolicy{attempts: 10, base: 200 * time.Millisecond, max: 3 * time.Second}
	for n, mid := range []time.Duration{200, 400, 800, 1600, 3000, 3000, 3000} {
		mid *= time.Millisecond
		for range 200 {
			if w := p.wait(n + 1); w < mid/2 || w > mid*3/2 {
				t.Fatalf("wait before dial %d: %s, want within ±50%% of %s", n+2, w, mid)
			}
		}
	}
	if w := p.wait(1000); w > p.max*3/2 {
		t.Errorf("wait after many dials: %s", w)
	}
}
