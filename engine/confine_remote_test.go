package engine

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// TestFinishRemoteRefusesBadAnswers: what the host prints after the set-up
// is outside input; an answer that is not the launcher's leaves the host
// unusable with an error (no confinement is invented), never a panic.
func TestFinishRemoteRefusesBadAnswers(t *testing.T) {
	good := "landlock 7 protocol " + strconv.Itoa(confine.Protocol) + " seccomp 1"
	sandbox := string(confine.Compile(confine.Spec{Writable: []string{"/tmp"}}).Encode())
	for _, tc := range []struct {
		name, stdout string
		sandbox      bool
		want         string // "" : ready
	}{
		{"ready", "uname Linux 6.1 x86_64\ndir /d\n" + good + "\nready\n", false, ""},
		{"no probe", "ready\n", false, "did not answer"},
		{"probe garbage", "landlock x\nready\n", false, "did not answer"},
		{"other protocol", "landlock 7 protocol 1\nready\n", false, "protocol 1"},
		{"no seccomp word", "landlock 7 protocol " + strconv.Itoa(confine.Protocol) + "\nready\n", false, "did not answer"},
		{"seccomp garbage", "landlock 7 protocol " + strconv.Itoa(confine.Protocol) + " seccomp x\nready\n", false, "did not answer"},
		{"no seccomp", "landlock 7 protocol " + strconv.Itoa(confine.Protocol) + " seccomp 0\nready\n", false, ""},
		{"rules not computed", good + "\n", false, "compute the rules"},
		{"sandbox missing", good + "\nready\n", true, "sandbox"},
		{"sandbox garbage", good + "\nsandbox agent-rules 3 dir rel 4\nready\n", true, "sandbox"},
		{"sandbox of an older launcher", good + "\nsandbox {\"v\":2,\"rules\":[{\"p\":\"/\",\"r\":4}]}\nready\n", true, "sandbox"},
		{"sandbox", good + "\nsandbox " + sandbox + "ready\n", true, ""},
	} {
		h := newConfiner(nil, confinerOptions{Policy: safety.DefaultPolicy()})
		h.specs = map[string]confine.Spec{"safe": {}, "medium": {Write: true}}
		if tc.sandbox {
			h.specs[sandboxName] = confine.Spec{}
		}
		err := h.finishRemote(parseSetup(tc.stdout), transport.Result{Stdout: tc.stdout}, "6.1", "/d/agent-launch-x", "/d/rules-k-6.1", h.stacks())
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		case tc.want == "" && len(h.conf[confine.ReadOnly].Wrap) == 0:
			t.Errorf("%s: no launcher for safe steps", tc.name)
		case (h.partly != "") != strings.HasSuffix(tc.name, "no seccomp"):
			t.Errorf("%s: partly enforced %q", tc.name, h.partly)
		}
	}
}

func FuzzParseSetup(f *testing.F) {
	f.Add("uname Linux 6.1 x86_64\ndir /d\nlandlock 7 protocol 8 seccomp 1\nsandbox agent-rules 6 dir / 4\nready\n")
	f.Add("unsafe /x is a link\n")
	f.Add("sandbox {}\n\n\nsend")
	f.Add("uname Linux 6.1 x86_64\nmade 2\ndir /d\nsend gzip\nunzipped\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := parseSetup(s)
		for k, v := range out {
			if k == "" || strings.Contains(k, " ") || strings.Contains(k+v, "\n") {
				t.Fatalf("key %q value %q", k, v)
			}
		}
		h := newConfiner(nil, confinerOptions{Policy: safety.DefaultPolicy()})
		h.specs = map[string]confine.Spec{"safe": {}, "medium": {Write: true}, sandboxName: {}}
		h.finishRemote(out, transport.Result{Stdout: s}, "6.1", "/d/x", "/d/r", h.stacks())
	})
}

// sshLike is the local transport calling itself an SSH host; it counts
// how the launcher was sent: over SFTP (WriteFile) or on a command's
// standard input.
type sshLike struct {
	transport.Transport
	writes, stdins atomic.Int32
}

func (s *sshLike) Host() transport.HostInfo {
	h := s.Transport.Host()
	h.Kind = "ssh"
	return h
}

func (s *sshLike) WriteFile(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	s.writes.Add(1)
	return s.Transport.WriteFile(ctx, p, r, perm)
}

func (s *sshLike) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	if cmd.Stdin != nil {
		s.stdins.Add(1)
	}
	return s.Transport.Run(ctx, cmd)
}

// TestLauncherSent: the launcher goes gzip-compressed on the set-up's
// standard input where the host has gzip, as it is over SFTP where it has
// not or where gzip fails; a decompressed file that is not the launcher is
// refused by its SHA-256 (no step runs); and nothing stays on the host.
func TestLauncherSent(t *testing.T) {
	if confine.ABI() < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel has no Landlock")
		}
		t.Skip("the kernel has no Landlock")
	}
	launcher := confinetest.Launcher(t)
	// A PATH with every command of the system's but gzip, and a gzip of
	// the test's where it says so.
	path := func(t *testing.T, gzip string) string {
		dir := t.TempDir()
		for _, sys := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
			ents, _ := os.ReadDir(sys)
			for _, e := range ents {
				if e.Name() != "gzip" {
					os.Symlink(filepath.Join(sys, e.Name()), filepath.Join(dir, e.Name()))
				}
			}
		}
		if gzip != "" {
			os.Remove(filepath.Join(dir, "gzip"))
			if err := os.WriteFile(filepath.Join(dir, "gzip"), []byte("#!/bin/sh\n"+gzip+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name, gzip     string // gzip: "" none, "-" the system's, else a script
		writes, stdins int32
		refused        string
	}{
		{"gzip", "-", 0, 1, ""},
		{"no gzip", "", 1, 0, ""},
		{"gzip fails", "cat >/dev/null; exit 1", 1, 1, ""},
		{"gzip lies", "cat >/dev/null; echo '#!/bin/sh'", 0, 1, "SHA-256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, state := t.TempDir(), t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_STATE_HOME", state)
			if tc.gzip != "-" {
				t.Setenv("PATH", path(t, tc.gzip))
			}
			lt, err := local.New()
			if err != nil {
				t.Fatal(err)
			}
			tr := &sshLike{Transport: lt}
			h := newConfiner(tr, confinerOptions{Policy: safety.DefaultPolicy(), Launcher: launcher,
				Home: func(context.Context) (string, error) { return home, nil }})
			c, err := h.Confine(context.Background(), confine.ReadOnly)
			switch {
			case tc.refused != "":
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Errorf("a launcher that is not agent's: %v, want refused (%s)", err, tc.refused)
				}
			case err != nil:
				t.Fatal(err)
			case len(c.Wrap) == 0 || !strings.HasPrefix(c.Wrap[0], state+"/agent/launch/s."):
				t.Errorf("confined by %q, want the session's launcher", c.Wrap)
			default:
				res, err := tr.Run(context.Background(), transport.Command{Wrap: c.Wrap, Command: "echo confined; echo x > " + shellQuote(state+"/x")})
				if err != nil || res.Stdout != "confined\n" || res.ExitCode == 0 {
					t.Errorf("a safe step under the launcher sent: %+v %v (want it to run, and the write refused)", res, err)
				}
			}
			if w, s := tr.writes.Load(), tr.stdins.Load(); w != tc.writes || s != tc.stdins {
				t.Errorf("sent %d times over SFTP and %d on stdin, want %d and %d", w, s, tc.writes, tc.stdins)
			}
			if err := h.Close(); err != nil {
				t.Error(err)
			}
			if left, _ := filepath.Glob(filepath.Join(state, "*")); len(left) > 0 {
				t.Errorf("left on the host: %q", left)
			}
		})
	}
}
