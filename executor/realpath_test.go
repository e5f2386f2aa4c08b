package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// countingRunner counts the commands run through a transport; it has a
// RealPath only when the transport under it has.
type countingRunner struct {
	transport.Transport
	runs atomic.Int32
	cmds []string
}

func (c *countingRunner) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	c.runs.Add(1)
	c.cmds = append(c.cmds, cmd.Command)
	return c.Transport.Run(ctx, cmd)
}

type countingRealPather struct{ *countingRunner }

func (c countingRealPather) RealPath(ctx context.Context, p string) (string, error) {
	return c.Transport.(transport.RealPather).RealPath(ctx, p)
}

// realPathHosts are the ways the executor can learn where a file really
// is: the local and SSH transports' RealPath, and `readlink -f` on a
// transport without it. Each gives the transport and the home it acts in.
func realPathHosts(t *testing.T) map[string]func() (transport.Transport, *countingRunner, string) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	cfg, err := sshtr.Resolve(srv.Alias, sshtr.ResolveOptions{ConfigFile: srv.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	localTr := func() transport.Transport {
		tr, err := local.New()
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	return map[string]func() (transport.Transport, *countingRunner, string){
		"local": func() (transport.Transport, *countingRunner, string) {
			c := &countingRunner{Transport: localTr()}
			return countingRealPather{c}, c, home
		},
		"ssh": func() (transport.Transport, *countingRunner, string) {
			tr, err := sshtr.Dial(context.Background(), cfg, sshtr.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tr.Close() })
			c := &countingRunner{Transport: tr}
			return countingRealPather{c}, c, srv.Home
		},
		"readlink": func() (transport.Transport, *countingRunner, string) {
			c := &countingRunner{Transport: localTr()}
			return c, c, home
		},
	}
}

// A symbolic link into a system path classifies as that path, whichever
// way the link is resolved; with RealPath, no command runs on the host.
func TestExecutorRealPathCapability(t *testing.T) {
	for name, open := range realPathHosts(t) {
		t.Run(name, func(t *testing.T) {
			tr, counter, home := open()
			sys := "/etc/agent-test-" + filepath.Base(t.TempDir()) // missing: a write would create it
			for link, target := range map[string]string{
				"passwd": "/etc/passwd", "etc": "/etc", "new": sys, "plain": home + "/real.txt",
			} {
				os.Remove(filepath.Join(home, link))
				must(t, os.Symlink(target, filepath.Join(home, link)))
			}
			must(t, os.WriteFile(filepath.Join(home, "real.txt"), []byte("x"), 0o644))
			e := New(Config{Transport: tr, Policy: safety.DefaultPolicy()})
			ctx := context.Background()
			if _, err := e.homeDir(ctx); err != nil {
				t.Fatal(err)
			}
			before := counter.runs.Load()
			for _, c := range []struct {
				tool, path string
				want       safety.Level
				show       string
			}{
				{"write_file", "~/passwd", safety.High, "~/passwd → /etc/passwd"},
				{"edit_file", "~/etc/hosts", safety.High, "~/etc/hosts → /etc/hosts"},
				{"write_file", "~/etc/agent-missing", safety.High, "~/etc/agent-missing → /etc/agent-missing"},
				{"write_file", "~/new", safety.High, "~/new → " + sys},
				{"read_file", "~/plain", safety.Safe, "~/plain → " + home + "/real.txt"},
				{"write_file", "~/missing/new.txt", safety.Medium, ""},
				{"write_file", "~/real.txt", safety.Medium, ""},
			} {
				params := map[string]any{"file_path": c.path}
				switch c.tool {
				case "write_file":
					params["content"] = "x"
				case "edit_file":
					params["search_pattern"], params["replacement"] = "a", "b"
				}
				cls, err := e.classifyTool(ctx, c.tool, params)
				if err != nil || cls.refused != nil || cls.risk.Level != c.want || cls.show != c.show {
					t.Errorf("%s %s: level %s, show %q, refused %v, err %v; want %s shown as %q",
						c.tool, c.path, cls.risk.Level, cls.show, cls.refused, err, c.want, c.show)
				}
			}
			runs := counter.runs.Load() - before
			switch {
			case name == "readlink" && runs != 7:
				t.Errorf("without RealPath: %d commands for 7 file steps, want 7 (readlink -f): %q", runs, counter.cmds)
			case name != "readlink" && runs != 0:
				t.Errorf("with RealPath: %d commands ran on the host: %q", runs, counter.cmds)
			}
			if name == "readlink" && !strings.HasPrefix(counter.cmds[len(counter.cmds)-1], "readlink -f -- ") {
				t.Errorf("fallback ran %q", counter.cmds[len(counter.cmds)-1])
			}
		})
	}
}

// A transfer's local file that is a link to a missing system file is
// where the download would write: it is judged as that file (refused: a
// download never writes a protected path).
func TestExecutorClassifyTransferDanglingLocalLink(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(home)
	h := newHarness(t)
	e := h.executor(safety.ModeNever, false, nil)
	sys := "/etc/cron.d/agent-test-" + filepath.Base(home)
	must(t, os.Symlink(sys, filepath.Join(home, "dl.txt")))
	cls, err := e.classifyTool(context.Background(), "download_file", map[string]any{"local_path": "~/dl.txt", "remote_path": "~/x"})
	if err != nil || cls.refused == nil || !strings.Contains(cls.refused.Error(), sys) {
		t.Errorf("download to a dangling link into %s: %+v %v, want refused naming it", sys, cls, err)
	}
}
