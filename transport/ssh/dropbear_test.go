package ssh

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

func TestGatedDropbear(t *testing.T) {
	for v, want := range map[string]bool{
		"SSH-2.0-dropbear_2022.83": true, "SSH-2.0-dropbear_2020.81": true, "SSH-2.0-dropbear_2024.84": false,
		"SSH-2.0-dropbear_2025.88": false, "SSH-2.0-dropbear": true, "SSH-2.0-dropbear_x": true,
		"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6": false, "": false,
	} {
		if got := gatedDropbear(v); got != want {
			t.Errorf("gatedDropbear(%q) = %v", v, got)
		}
	}
}

// Debian 12's Dropbear (2022.83) ends the connection when a session
// process exits while another session is open without its exec yet: the
// commands a step's checks run at once (RealPath's lookups, the worker,
// writes with stdin) must not make it. 20 connections, each with
// concurrent lookups and writes, none failing.
func TestDropbearConcurrentSessions(t *testing.T) {
	d := testenv.StartDropbear(t, testenv.DropbearOptions{})
	if err := d.Mkdir(d.Home+"/work", 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		var w warnings
		tr := dial(t, hostConfig(d.Host), Options{Warn: w.warn})
		if tr.chanGate == nil {
			t.Fatalf("%s: not gated", tr.conn.client.ServerVersion())
		}
		var wg sync.WaitGroup
		for j := range 4 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				if _, err := tr.RealPath(ctx20(t), "~/work/x/../log.txt"); err != nil && !strings.Contains(err.Error(), "no such") {
					t.Errorf("connection %d, lookup %d: %v", i, j, err)
				}
			}()
			go func() {
				defer wg.Done()
				res, err := tr.Run(ctx20(t), transport.Command{Command: "cat", Stdin: bytes.NewReader([]byte("in"))})
				if err != nil || res.Stdout != "in" {
					t.Errorf("connection %d, command %d: %q %v", i, j, res.Stdout, err)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.Logf("warnings: %s", w.String())
		}
		tr.Close()
	}
	if strings.Contains(d.Log(), "Failed assertion") {
		t.Errorf("Dropbear failed:\n%s", d.Log())
	}
}
