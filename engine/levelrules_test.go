package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// The file tools' in-process check (LevelBlocked) decides as the kernel
// does: over the same paths of a scratch home, a shell command confined
// at the level and the check agree on every write (medium), read and
// directory listing (safe), locally and over real sshd.
func conformHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	for f, c := range map[string]string{
		"work/exist.txt": "w\n", "notes.txt": "n\n", ".bashrc": "rc\n", ".config/app/app.conf": "a\n",
		".ssh/authorized_keys": "k\n", ".ssh/id_ed25519": "key\n", ".npmrc": "//r/:_authToken=x\n",
		".local/lib/python3.11/site-packages/requests/__init__.py": "r\n", "src/app/.git/HEAD": "ref\n",
		"src/app/main.go": "package main\n", ".aws/credentials": "secret\n", ".config/tmux/README": "t\n",
		"proj/.env": "TOKEN=x\n", "proj/main.py": "print(1)\n",
	} {
		mkfile(t, filepath.Join(home, f), c)
	}
	return home
}

func mkfile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	conformWrites = []string{"work/new.txt", "work/exist.txt", "notes.txt", "new.txt", ".hgrc", ".newdot",
		".config/tmux.conf", ".config/tmux/tmux.conf", ".config/app/new.conf", ".config/app/app.conf", ".bashrc",
		".ssh/authorized_keys", ".ssh/new", ".local/lib/python3.11/site-packages/x.pth", "src/app/.git/hooks/post-checkout",
		"src/app/main.go", "src/app/new.go", ".config/agent/policy.yaml", "/etc/agent-conform-x"}
	conformReads = []string{"work/exist.txt", "notes.txt", ".bashrc", ".config/app/app.conf", ".ssh/authorized_keys",
		".ssh/id_ed25519", ".npmrc", ".aws/credentials", "src/app/main.go", "/etc/hostname", "proj/.env", "proj/main.py"}
	conformLists = []string{"work", "proj", ".ssh", ".aws", ".config", "src/app", "src/app/.git", "/etc"}
)

func conform(t *testing.T, tr transport.Transport, home string, launcher confine.LauncherFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newConfiner(tr, confinerOptions{Policy: safety.DefaultPolicy(), Launcher: launcher, Require: true,
		Home: func(context.Context) (string, error) { return home, nil }})
	defer h.Close()
	abs := func(p string) string {
		if strings.HasPrefix(p, "/") {
			return p
		}
		return home + "/" + p
	}
	shell := func(level confine.Level, cmd string) bool {
		t.Helper()
		c, err := h.Confine(ctx, level)
		if err != nil || c.None() {
			t.Fatalf("confine at %s: %+v %v", level, c, err)
		}
		res, err := tr.Run(ctx, transport.Command{Wrap: c.Wrap, Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		return res.ExitCode == 0
	}
	blocked := 0
	for _, p := range conformWrites {
		why, err := h.LevelBlocked(ctx, confine.NoProtected, true, false, abs(p))
		if err != nil {
			t.Fatal(err)
		}
		ok := shell(confine.NoProtected, "echo x >> "+shellQuote(abs(p)))
		if ok != (why == "") {
			t.Errorf("medium write to %s: the shell %s, the check says %q", p, map[bool]string{true: "wrote", false: "was refused"}[ok], why)
		}
		if why != "" {
			blocked++
		}
	}
	for _, p := range conformReads {
		why, err := h.LevelBlocked(ctx, confine.ReadOnly, false, false, abs(p))
		if err != nil {
			t.Fatal(err)
		}
		ok := shell(confine.ReadOnly, "cat "+shellQuote(abs(p)))
		if ok != (why == "") {
			t.Errorf("safe read of %s: the shell %s, the check says %q", p, map[bool]string{true: "read it", false: "was refused"}[ok], why)
		}
		if why != "" {
			blocked++
		}
	}
	for _, p := range conformLists {
		why, err := h.LevelBlocked(ctx, confine.ReadOnly, false, true, abs(p))
		if err != nil {
			t.Fatal(err)
		}
		ok := shell(confine.ReadOnly, "ls -a "+shellQuote(abs(p))+" >/dev/null")
		if ok != (why == "") {
			t.Errorf("safe listing of %s: the shell %s, the check says %q", p, map[bool]string{true: "listed it", false: "was refused"}[ok], why)
		}
		if why != "" {
			blocked++
		}
	}
	if blocked < 10 {
		t.Errorf("only %d of the paths were refused: the home is not what the test means", blocked)
	}
}

func TestLevelRulesConformLocal(t *testing.T) {
	needLandlockHere(t)
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	home := conformHome(t)
	t.Setenv("HOME", home)
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	conform(t, tr, home, nil)
}

func TestLevelRulesConformSSHD(t *testing.T) {
	needLandlockHere(t)
	home := conformHome(t)
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + t.TempDir() + "\n"})
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := sshtr.Resolve(d.Alias, sshtr.ResolveOptions{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sshtr.Dial(ctx, cfg, sshtr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	conform(t, tr, home, confinetest.Launcher(t))
}

func needLandlockHere(t *testing.T) {
	t.Helper()
	if confine.ABI() < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel has no Landlock")
		}
		t.Skip("the kernel has no Landlock")
	}
}

// BenchmarkLevelBlocked is what the check adds to a file tool step run
// by nobody's approval: the level's rules read back and searched, on
// this machine and over real sshd (one SFTP read).
func BenchmarkLevelBlocked(b *testing.B) {
	if confine.ABI() < 1 {
		b.Skip("the kernel has no Landlock")
	}
	home := filepath.Join(b.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "work"), 0o755); err != nil {
		b.Fatal(err)
	}
	b.Setenv("XDG_STATE_HOME", filepath.Join(b.TempDir(), "state"))
	lt, err := local.New()
	if err != nil {
		b.Fatal(err)
	}
	d := testenv.StartSSHD(b, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + "\n"})
	cfg, err := sshtr.Resolve(d.Alias, sshtr.ResolveOptions{ConfigFile: d.SSHConfig})
	if err != nil {
		b.Fatal(err)
	}
	st, err := sshtr.Dial(context.Background(), cfg, sshtr.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		name     string
		tr       transport.Transport
		launcher confine.LauncherFunc
	}{{"local", lt, nil}, {"sshd", st, confinetest.Launcher(b)}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			h := newConfiner(c.tr, confinerOptions{Policy: safety.DefaultPolicy(), Launcher: c.launcher, Require: true,
				Home: func(context.Context) (string, error) { return home, nil }})
			defer h.Close()
			if _, err := h.Confine(ctx, confine.NoProtected); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if why, err := h.LevelBlocked(ctx, confine.NoProtected, true, false, home+"/work/x"); why != "" || err != nil {
					b.Fatal(why, err)
				}
			}
		})
	}
}
