package executor

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// lookupCounter counts RealPath lookups (and commands) through a
// transport that has RealPath.
type lookupCounter struct {
	*countingRunner
	lookups atomic.Int32
}

func (l *lookupCounter) RealPath(ctx context.Context, p string) (string, error) {
	l.lookups.Add(1)
	return l.Transport.(transport.RealPather).RealPath(ctx, p)
}

// ReadDir lists directories through the counter (transport.DirReader),
// and only that: an Unwrap would lend it every capability of the
// transport below, RealPath too, which the "readlink" host must lack.
func (c *countingRunner) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	return transport.ReadDir(ctx, c.Transport, p)
}

// viaPattern in a case of TestExecutorCommandFollowsHostLinks: High
// where the transport has RealPath, else Medium.
const viaPattern = safety.Level(-1)

// linkedHome fills home with secrets and the symbolic links an attacker
// (or an earlier step) left there.
func linkedHome(t *testing.T, home string) {
	t.Helper()
	for name, content := range map[string]string{
		".bashrc": "# rc\n", ".ssh/id_rsa": "-----BEGIN PRIVATE KEY-----\n", ".ssh/authorized_keys": "ssh-ed25519 AAAA ok\n",
		".ssh/sub/x": "x\n", "plain.txt": "plain\n", ".config/agent/config.yaml": "safety: {}\n", "pub/readme": "hi\n",
		".profile": "# profile\n", "lk/plain.txt": "x\n",
	} {
		p := filepath.Join(home, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
	for link, target := range map[string]string{
		"x": home + "/.bashrc", "y": home + "/.ssh/id_rsa", "d": home + "/.ssh", "rel": ".ssh/id_rsa",
		"chain1": "chain2", "chain2": home + "/y", "loop": "loop", "p": home + "/plain.txt",
		"u": home + "/.ssh/sub", "cfg": ".config", "pub/up": "..", "dangling": home + "/.ssh/new_key",
		"lk/rc.txt": home + "/.bashrc", "lk/.hidden": home + "/.profile", "lk/notes.txt": home + "/plain.txt",
	} {
		os.Remove(filepath.Join(home, link))
		must(t, os.Symlink(target, filepath.Join(home, link)))
	}
}

// Symbolic links already on the host are followed for the files a shell
// command reads and writes, over each way of resolving them; a command
// without file operands costs no lookup.
func TestExecutorCommandFollowsHostLinks(t *testing.T) {
	for name, open := range realPathHosts(t) {
		t.Run(name, func(t *testing.T) {
			tr, counter, home := open()
			var lc *lookupCounter
			if name != "readlink" {
				lc = &lookupCounter{countingRunner: counter}
				tr = lc
			}
			linkedHome(t, home)
			e := New(Config{Transport: tr, Policy: safety.DefaultPolicy()})
			ctx := context.Background()
			if _, err := e.homeDir(ctx); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				cmd     string
				want    safety.Level
				lookups bool // the host is asked
			}{
				{"echo evil >> ~/x", safety.High, true},
				{"echo evil > " + home + "/x", safety.High, true},
				{"cat ~/y", safety.High, true},
				{"head -c 100 < ~/y", safety.High, true},
				{"cat ~/d/id_rsa", safety.High, false}, // id_rsa is a secret by name
				{"cat ~/d/sub/x", safety.High, true},
				{"cd ~/d && cat sub/x", safety.High, true},
				{"cat ~/rel", safety.High, true},
				{"cat ~/chain1", safety.High, true},
				{"grep -r KEY ~/d", safety.High, true},
				{"cat ~/d/*", safety.High, false}, // a pattern in ~ reaches .ssh already
				{"cat ~/pub/up/.ssh/sub/x", safety.High, true},
				{"cat ~/u/*", safety.High, false},
				{"rm -f ~/u/*.tmp", safety.High, true},
				{"rm -f ~/pub/*.tmp", safety.Medium, true},
				{"echo x | tee ~/lk/*.txt", viaPattern, true}, // lk/rc.txt -> ~/.bashrc
				{"echo x | tee ~/lk/[!r]*.txt", safety.Medium, true},
				{"echo x | tee ~/lk/[a-q]*.txt", safety.Medium, true},
				{"touch ~/lk/.*", viaPattern, true}, // lk/.hidden -> ~/.profile
				{"touch ~/lk/*", viaPattern, true},
				{"chmod 600 ~/lk/r?.txt", viaPattern, true},
				{"cat ~/pub/up/.bash_history", safety.High, false}, // a history file is a secret by name
				{"echo x >> ~/cfg/agent/config.yaml", safety.High, true},
				{"mkdir -p ~/d/new", safety.High, true},
				{"cp ~/plain.txt ~/dangling", safety.High, true},
				{"echo k >> ~/u/../authorized_keys", safety.High, true},
				{"cd ~/u && echo k >> ../authorized_keys", safety.High, true},
				{"echo k >> ~/pub/../plain.txt", safety.Medium, true},
				{"echo x > ~/loop", safety.High, true},
				{"cat ~/loop", safety.Medium, true},
				{"cat ~/p", safety.Safe, true},
				{"echo x >> ~/p", safety.Medium, true},
				{"find ~/d -name '*.pub'", safety.Safe, true},
				{"mkdir -p ~/fresh/a && echo x > ~/fresh/a/f", safety.Medium, true},
				{"cat ~/plain.txt", safety.Safe, true},
				{"echo hi", safety.Safe, false},
				{"uname -a; date; echo x > /dev/null 2>&1", safety.Safe, false},
				{"cat ~/.ssh/id_rsa", safety.High, false}, // High already: nothing to look up
			} {
				before := counter.runs.Load()
				var lb int32
				if lc != nil {
					lb = lc.lookups.Load()
				}
				if c.want == viaPattern {
					// The links a pattern matches are listed and followed
					// where the transport has RealPath (all of agent's).
					c.want = safety.High
					if name == "readlink" {
						c.want = safety.Medium
					}
				}
				cls, err := e.classifyTool(ctx, "execute_command", map[string]any{"command": c.cmd})
				if err != nil || cls.refused != nil || cls.risk.Level != c.want {
					t.Errorf("%q: %s %v (refused %v, err %v); want %s", c.cmd, cls.risk.Level, cls.risk.Reasons, cls.refused, err, c.want)
				}
				asked := counter.runs.Load() != before
				if lc != nil {
					if counter.runs.Load() != before {
						t.Errorf("%q: ran a command on the host to resolve links: %q", c.cmd, counter.cmds[before:])
					}
					asked = lc.lookups.Load() != lb
				} else if asked && counter.runs.Load()-before != 1 {
					t.Errorf("%q: %d commands to resolve its files, want 1: %q", c.cmd, counter.runs.Load()-before, counter.cmds[before:])
				}
				if asked != c.lookups {
					t.Errorf("%q: host asked %v, want %v", c.cmd, asked, c.lookups)
				}
			}
		})
	}
}

// The reasons say where the link leads.
func TestExecutorCommandHostLinkReason(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	linkedHome(t, home)
	tr := &lookupCounter{countingRunner: &countingRunner{Transport: mustLocal(t)}}
	e := New(Config{Transport: tr, Policy: safety.DefaultPolicy()})
	cls, err := e.classifyTool(context.Background(), "execute_command", map[string]any{"command": "cat ~/y"})
	must(t, err)
	if !strings.Contains(strings.Join(cls.risk.Reasons, "\n"), home+"/.ssh/id_rsa") {
		t.Errorf("reasons %q do not name where ~/y leads", cls.risk.Reasons)
	}
	cls, err = e.classifyTool(context.Background(), "execute_command", map[string]any{"command": "echo > ~/loop"})
	must(t, err)
	if r := strings.Join(cls.risk.Reasons, "\n"); !strings.Contains(r, "not known") {
		t.Errorf("reasons %q do not say the loop could not be resolved", r)
	}
}

func mustLocal(t *testing.T) transport.Transport {
	t.Helper()
	tr, err := local.New()
	must(t, err)
	return tr
}

// parseReadlinks reads the host's answer as outside input.
func TestParseReadlinks(t *testing.T) {
	for _, c := range []struct {
		out  string
		n    int
		real []string // "" = unresolved
	}{
		{"ok/a\x00ok/b c\x00", 2, []string{"/a", "/b c"}},
		{"ok/a\n\x00", 1, []string{"/a\n"}}, // a name ending in a newline
		{"no\x00ok/b\x00", 2, []string{"", "/b"}},
		{"ok/a\x00", 2, []string{"", ""}},                 // too few records
		{"ok/a\x00ok/b\x00ok/c\x00", 2, []string{"", ""}}, // too many
		{"ok/a\x00ok/b", 2, []string{"", ""}},             // the last not ended
		{"oka\x00ok/b/../c\x00ok/\xff\x00ok//x\x00\x00", 5, []string{"", "", "/\xff", "", ""}},
		{"", 0, []string{}},
		{"", 1, []string{""}},
	} {
		got := parseReadlinks(c.out, c.n)
		if len(got) != c.n {
			t.Fatalf("%q: %d results for %d paths", c.out, len(got), c.n)
		}
		for i, r := range got {
			if r.real != c.real[i] || (r.real == "") == (r.why == "") {
				t.Errorf("%q [%d] = %+v, want real %q", c.out, i, r, c.real[i])
			}
		}
	}
}

func FuzzParseReadlinks(f *testing.F) {
	f.Add("ok/a\x00ok/b\x00", 2)
	f.Add("\x00\x00", 1)
	f.Add("ok/a/../b\x00no\x00", 2)
	f.Fuzz(func(t *testing.T, out string, n int) {
		n = max(0, n%64)
		got := parseReadlinks(out, n)
		if len(got) != n {
			t.Fatalf("%d results for %d paths", len(got), n)
		}
		for _, r := range got {
			if (r.real == "") == (r.why == "") {
				t.Fatalf("%+v: exactly one of real and why must be set", r)
			}
			if r.real != "" && (!strings.HasPrefix(r.real, "/") || filepath.Clean(r.real) != r.real || strings.ContainsRune(r.real, 0)) {
				t.Fatalf("accepted %q", r.real)
			}
		}
	})
}

// The benign corpus rated on this machine, its real files and links
// followed, is rated as the classifier alone rates it: resolving on the
// host adds no false alarm on an ordinary system.
func TestBenignCorpusOnHost(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	b, err := os.ReadFile("../safety/testdata/benign.txt")
	must(t, err)
	p := safety.DefaultPolicy()
	tr := &lookupCounter{countingRunner: &countingRunner{Transport: mustLocal(t)}}
	e := New(Config{Transport: tr, Policy: p})
	ctx := context.Background()
	n, safe, looked := 0, 0, 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, cmd, ok := strings.Cut(line, "\t"); ok {
			line = cmd
		}
		n++
		lb := tr.lookups.Load()
		cls, err := e.classifyTool(ctx, "execute_command", map[string]any{"command": line})
		must(t, err)
		if tr.lookups.Load() != lb {
			looked++
		}
		alone := p.ClassifyCommandAt(line, home)
		if cls.risk.Level != alone.Level {
			t.Errorf("%q: %s on this host, %s by the classifier alone: %q", line, cls.risk.Level, alone.Level, cls.risk.Reasons)
		}
		if cls.risk.Level == safety.Safe {
			safe++
		}
	}
	t.Logf("%d benign commands, %d safe on this host, %d needed a lookup", n, safe, looked)
}
