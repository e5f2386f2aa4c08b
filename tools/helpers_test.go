package tools

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	"github.com/autoshell/agent/transport/ssh"
)

// target is a host to run tools on: a transport and a scratch directory on
// it (on the same file system as the test, so tests can look directly).
type target struct {
	name string
	tr   transport.Transport
	dir  string
}

// targets returns the local transport and one over the in-process SSH
// server, each with a fresh scratch directory.
func targets(t *testing.T) []target {
	t.Helper()
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lt.Close() })
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	h := srv.Host
	cfg := &ssh.HostConfig{
		Alias: h.Alias, HostName: "127.0.0.1", Port: h.Port, User: h.User,
		IdentityFiles: []string{h.IdentityFile}, IdentitiesOnly: true, IdentityAgent: "none",
		ConnectTimeout: 10 * time.Second, StrictHostKeyChecking: "yes", UserKnownHostsFiles: []string{h.KnownHosts},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := ssh.Dial(ctx, cfg, ssh.Options{})
	if err != nil {
		t.Fatalf("dial in-process SSH server: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	sshDir, err := os.MkdirTemp(h.Home, "tools-")
	if err != nil {
		t.Fatal(err)
	}
	return []target{{"local", lt, t.TempDir()}, {"ssh", st, sshDir}}
}

func testPolicy() safety.Policy {
	p := safety.DefaultPolicy()
	p.MaxReadBytes, p.MaxWriteBytes = 1<<20, 1<<20
	return p
}

func raw(t testing.TB, m map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func writeFile(t *testing.T, p, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
