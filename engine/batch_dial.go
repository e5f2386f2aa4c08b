package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/autoshell/agent/transport"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// retryPolicy says how a batch dials a host again whose sshd dropped the
// connection before the handshake (sshtr.ErrDropped): sshd does that past
// MaxStartups — by default it starts refusing at 10 connections not yet
// authenticated and refuses all at 100, far fewer than --forks 200 through
// one bastion or to one address — and the host is up: it is a matter of
// coming back later, not a failed host.
type retryPolicy struct {
	attempts  int           // dials in all, the first included
	base, max time.Duration // the wait before the second dial, and the longest wait
}

// dropRetry: waits of 0.2, 0.4, 0.8, 1.6, then 3 s, each jittered by ±50%
// so that the connections dropped together do not come back together;
// about 20 s before a host whose sshd keeps refusing is given up.
var dropRetry = retryPolicy{attempts: 10, base: 200 * time.Millisecond, max: 3 * time.Second}

// wait is the pause before dial n+1 (n ≥ 1).
func (p retryPolicy) wait(n int) time.Duration {
	d := p.base << min(n-1, 20)
	if d > p.max || d <= 0 {
		d = p.max
	}
	return d/2 + rand.N(d+1) // [d/2, 3d/2]
}

// dialRetrying dials bh's host, again after a drop as dropRetry says,
// noting each retry in the host's log. The error after the last attempt
// says how many there were.
func (b *Batch) dialRetrying(ctx context.Context, bh *batchHost, d DialOptions) (transport.Transport, error) {
	p := dropRetry
	for n := 1; ; n++ {
		tr, err := Dial(ctx, bh.t, d)
		if err == nil || !errors.Is(err, sshtr.ErrDropped) {
			return tr, err
		}
		if n >= p.attempts {
			return nil, fmt.Errorf("%w (%d attempts)", err, n)
		}
		w := p.wait(n)
		bh.note(fmt.Sprintf("agent: %v; dialling again in %s (attempt %d of %d)", err, w.Round(time.Millisecond), n+1, p.attempts))
		t := time.NewTimer(w)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, err
		}
	}
}
