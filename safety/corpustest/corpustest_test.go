package corpustest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCapsDropped(t *testing.T) {
	for _, c := range []struct {
		status string
		ok     bool
	}{
		{"CapEff:\t0000000000000000\nCapBnd:\t000001fffe9fcfff\n", false}, // SYS_TIME etc. still bounded
		{"CapEff:\t0000000000000000\nCapBnd:\t00000000a80405fb\n", true},  // Docker's default set less CAP_NET_RAW
		{"CapEff:\t0000000000000000\nCapBnd:\t00000000a82405fb\n", false}, // + CAP_SYS_ADMIN
		{"CapEff:\t0000000400000000\nCapBnd:\t0000000000000000\n", false}, // CAP_SYSLOG
		{"CapEff:\t0000000000000000\n", false},                            // no bounding set read
		{"", false},
		{"CapEff:\tzz\nCapBnd:\t0\n", false},
		{"agent-launch: not confined, not run: EPERM\n", false},
	} {
		err := CheckCapsDropped(c.status)
		if (err == nil) != c.ok {
			t.Errorf("CheckCapsDropped(%q) = %v, want ok %v", c.status, err, c.ok)
		}
	}
}

func TestAttacksAimedAtHome(t *testing.T) {
	es := Attacks(t, "/scratch/h")
	high, medium := Split(es)
	if len(high) < 500 || len(medium) == 0 {
		t.Fatalf("%d high, %d medium entries: corpus not read whole", len(high), len(medium))
	}
	for _, e := range es {
		if strings.Contains(e.Command, "/home/u") {
			t.Errorf("%q still aims at /home/u", e.Command)
		}
	}
}

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, a ...any) { r.errs = append(r.errs, format) }
func (r *recorder) Helper()                        {}

func TestTreeSameSeesChanges(t *testing.T) {
	home := t.TempDir()
	Home(t, home)
	before := Tree(t, home)
	for name, change := range map[string]func(string) error{
		"content": func(h string) error { return os.WriteFile(filepath.Join(h, ".bashrc"), []byte("evil\n"), 0o600) },
		"mode":    func(h string) error { return os.Chmod(filepath.Join(h, ".profile"), 0o666) },
		"removed": func(h string) error { return os.RemoveAll(filepath.Join(h, "important")) },
		"added":   func(h string) error { return os.WriteFile(filepath.Join(h, ".ssh", "rc"), nil, 0o600) },
		"link": func(h string) error {
			p := filepath.Join(h, "important", "a.txt")
			return errors.Join(os.Remove(p), os.Symlink(filepath.Join(h, ".ssh", "id_rsa"), p))
		},
		"unreadable": func(h string) error { return os.Chmod(filepath.Join(h, ".aws"), 0) },
	} {
		t.Run(name, func(t *testing.T) {
			h := t.TempDir()
			Home(t, h)
			t.Cleanup(func() { os.Chmod(filepath.Join(h, ".aws"), 0o700) })
			if err := change(h); err != nil {
				t.Fatal(err)
			}
			r := &recorder{TB: t}
			Same(r, name, Tree(t, h), Tree(t, h))
			if len(r.errs) != 0 {
				t.Fatalf("the same tree twice: %v", r.errs)
			}
			// Compare with a pristine home at the same path.
			fresh := map[string]string{}
			for p, v := range before {
				fresh[h+strings.TrimPrefix(p, home)] = v
			}
			Same(r, name, fresh, Tree(t, h))
			if len(r.errs) == 0 {
				t.Errorf("%s: Same saw no change", name)
			}
		})
	}
}

func TestToolAttacksAimedAtHome(t *testing.T) {
	es := ToolAttacks(t, "/scratch/h")
	n := map[string]int{}
	for _, e := range es {
		n[e.Class]++
		for _, s := range e.Steps {
			if strings.Contains(fmt.Sprint(s), "/home/u") {
				t.Errorf("%s still aims at /home/u", e.Name)
			}
			if _, ok := s["tool"].(string); !ok {
				t.Errorf("%s: a step without a tool", e.Name)
			}
			if _, ok := s["parameters"].(map[string]any); !ok {
				t.Errorf("%s: a step without parameters", e.Name)
			}
		}
	}
	if n["file-read"]+n["file-write"] < 15 || n["template"] < 15 || n["control"] == 0 {
		t.Errorf("entries per class: %v, want at least 15 through the file tools, 15 templates and a control", n)
	}
}

func TestMediumMayChange(t *testing.T) {
	for p, want := range map[string]bool{
		"/h/work": true, "/h/work/a": true, "/h/important/x": true, "/h/report.txt": true,
		"/h/work/payloads": false, "/h/work/payloads/3": false, "/h/.bashrc": false, "/h/.ssh/config": false,
		"/h/dotfiles/ssh_config": false, "/h": false, "/elsewhere": false, "/h/.newdot": false,
	} {
		if got := MediumMayChange("/h", p); got != want {
			t.Errorf("MediumMayChange(%q) = %v, want %v", p, got, want)
		}
	}
}
