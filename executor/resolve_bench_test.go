package executor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// BenchmarkClassifyHostLinks: what resolving a command's files on the
// host costs a step's classification, over the in-process SSH server and
// locally: a command without file operands (no lookup, the peer), one
// file, a file through a link, five files.
func BenchmarkClassifyHostLinks(b *testing.B) {
	srv := testenv.StartSSHServer(b, testenv.SSHServerOptions{})
	cfg, err := sshtr.Resolve(srv.Alias, sshtr.ResolveOptions{ConfigFile: srv.SSHConfig})
	if err != nil {
		b.Fatal(err)
	}
	sshT, err := sshtr.Dial(context.Background(), cfg, sshtr.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sshT.Close() })
	localHome := b.TempDir()
	b.Setenv("HOME", localHome)
	localT, err := local.New()
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range []struct {
		name string
		tr   transport.Transport
		home string
	}{{"ssh", sshT, srv.Home}, {"local", localT, localHome}} {
		for _, f := range []string{"plain.txt", "pub/readme", "lk/plain.txt", "lk/notes.txt"} {
			p := filepath.Join(h.home, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.Symlink(filepath.Join(h.home, "plain.txt"), filepath.Join(h.home, "p")); err != nil {
			b.Fatal(err)
		}
		e := New(Config{Transport: h.tr, Policy: safety.DefaultPolicy()})
		ctx := context.Background()
		if _, err := e.homeDir(ctx); err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct{ name, cmd string }{
			{"no-paths", "uname -a; date"},
			{"one-path", "cat ~/plain.txt"},
			{"via-link", "cat ~/p"},
			{"five-paths", "cat ~/plain.txt ~/pub/readme ~/p ~/lk/plain.txt ~/lk/notes.txt"},
		} {
			b.Run(h.name+"/"+c.name, func(b *testing.B) {
				for range b.N {
					if _, err := e.classifyTool(ctx, "execute_command", map[string]any{"command": c.cmd}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
