package sshmux

import (
	"context"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// TestRefusedSessionsKeepMaster: more sessions at once than sshd's
// MaxSessions (10, over the master's whole connection) are retried until
// slots free, all run, and the operator's master survives the client's
// end. (In proxy mode a refused channel made the master exit with
// "chan_send_close2: no remote_id" as the client went: see Dial.)
func TestRefusedSessionsKeepMaster(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	m := testenv.StartControlMaster(t, d.Host)
	ctx := context.Background()
	c, err := Dial(ctx, m.Socket)
	if err != nil {
		t.Fatal(err)
	}
	const n = 14
	outs := make(chan string, n)
	for i := 0; i < n; i++ {
		go func() {
			s, err := c.NewSession()
			if err != nil {
				outs <- err.Error()
				return
			}
			defer s.Close()
			out, err := s.Output("sleep 0.5; echo ok")
			if err != nil {
				outs <- err.Error()
				return
			}
			outs <- string(out)
		}()
	}
	for i := 0; i < n; i++ {
		if out := <-outs; out != "ok\n" {
			t.Errorf("session: %q", out)
		}
	}
	c.Close()
	time.Sleep(300 * time.Millisecond)
	if _, err := AliveCheck(ctx, m.Socket); err != nil {
		t.Errorf("the master after the client's end: %v", err)
	}
}
