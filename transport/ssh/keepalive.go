package ssh

import (
	"fmt"
	"time"
)

const (
	// defaultAliveInterval is used when ServerAliveInterval is zero. OpenSSH
	// disables keepalive then; an unattended agent must notice a dead host,
	// so it keeps it on.
	defaultAliveInterval = 15 * time.Second
	// defaultAliveCountMax is OpenSSH's ServerAliveCountMax default.
	defaultAliveCountMax = 3
)

// keepalive sends keepalive@openssh.com (want-reply) every interval until c
// ends. When countMax requests in a row are unanswered for an interval
// after the next one was due, it closes c, so that whatever waits on the
// connection fails promptly with transport.ErrConnection instead of
// hanging on a dead TCP peer. Any reply, even a refusal, proves the peer is
// alive.
func keepalive(c *conn, interval time.Duration, countMax int) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	// At most countMax+1 requests are outstanding; each goroutine can always
	// deliver its answer, even after this loop has returned.
	replies := make(chan error, countMax+1)
	pending, missed := 0, 0
	for {
		select {
		case <-c.done:
			return
		case err := <-replies:
			pending--
			if err != nil {
				c.close(fmt.Errorf("keepalive: %w", err))
				return
			}
			missed = 0
		case <-tick.C:
			if pending > 0 {
				missed++
				if missed >= countMax {
					c.close(fmt.Errorf("no reply to %d keepalives in %s", missed, time.Duration(missed)*interval))
					return
				}
			}
			if pending <= countMax {
				pending++
				go func() {
					_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
					replies <- err
				}()
			}
		}
	}
}
