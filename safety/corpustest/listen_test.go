package corpustest

import (
	"net"
	"testing"
	"time"
)

// TestListenTakesTurns: two tests listening on the corpus's port at once
// (parallel tests, or two packages' test processes) wait for each other
// rather than fail with "address already in use".
func TestListenTakesTurns(t *testing.T) {
	const port = "5354" // not the corpus's own port, which other packages' tests hold
	for _, name := range []string{"first", "second"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			heard := Listen(t, port)
			c, err := net.Dial("udp", "127.0.0.1:"+port)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write([]byte(name)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			if got := heard(); got == "" {
				t.Errorf("%s heard nothing", name)
			}
		})
	}
}
