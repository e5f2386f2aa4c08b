package safety

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestProtectedIsOneListForClassifierAndKernel(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/srv/cfg")
	t.Setenv("XDG_STATE_HOME", "")
	p := DefaultPolicy()
	pr := p.Protected("/home/ops/")
	for _, want := range []string{"/etc", "/home/ops/.ssh", "/home/ops/.bashrc", "/home/ops/.config/agent",
		"/home/ops/.local/state/agent", "/srv/cfg/agent", "/home/ops/.gitconfig", "/home/ops/.local/bin"} {
		if !slices.Contains(pr.NoWrite, want) {
			t.Errorf("NoWrite lacks %s: %v", want, pr.NoWrite)
		}
	}
	for _, want := range []string{"/home/ops/.ssh", "/home/ops/.aws", "/home/ops/.gnupg", "/home/ops/.config/agent",
		"/home/ops/.bash_history", "/proc/*/environ", "/home/ops/.local/state/agent"} {
		if !slices.Contains(pr.NoRead, want) {
			t.Errorf("NoRead lacks %s: %v", want, pr.NoRead)
		}
	}
	for _, e := range slices.Concat(pr.NoWrite, pr.NoRead) {
		if e == "" || e[0] != '/' {
			t.Errorf("entry %q is not absolute", e)
		}
	}
	// Every NoWrite entry is High to write for the classifier, every NoRead
	// entry High to read: the two layers agree.
	for _, e := range pr.NoWrite {
		if a := p.classifyFile(FileWrite, e+"/x", "/home/ops"); a.Level != High {
			t.Errorf("write %s/x = %s, want high", e, a)
		}
	}
	for _, e := range pr.NoRead {
		if a := p.classifyFile(FileRead, e, "/home/ops"); a.Level != High {
			t.Errorf("read %s = %s, want high", e, a)
		}
	}
}

func TestCheckPolicyFileRefusesWritableByOthers(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(f, []byte("safety: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for mode, ok := range map[os.FileMode]bool{0o600: true, 0o644: true, 0o664: false, 0o646: false, 0o666: false} {
		if err := os.Chmod(f, mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckPolicyFile(f, fi)
		if (err == nil) != ok || err != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("mode %o: err = %v, want ok=%v", mode, err, ok)
		}
	}
}

// A HOME outside /home and /root is still home when the host's home is known.
func TestClassifyCommandAtHome(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string]Level{
		"echo x >> /srv/h/.bashrc":         High,
		"cat /srv/h/.ssh/id_rsa":           High,
		"grep -r x /srv":                   High, // holds the home
		"echo x > /srv/h/notes.txt":        Medium,
		"cat /srv/h/notes.txt":             Safe,
		"cd /srv/h && cat .aws/config":     High,
		"cd /srv/h/app && grep -r x .":     Safe,
		"ln -s /srv/h/.bashrc /tmp/x":      High,
		"cat /proc/self/root/srv/h/.netrc": High,
	} {
		if a := p.ClassifyCommandAt(cmd, "/srv/h/"); a.Level != want {
			t.Errorf("ClassifyCommandAt(%q, /srv/h) = %s, want %s", cmd, a, want)
		}
	}
	if a := p.ClassifyCommand("echo x >> /srv/h/.bashrc"); a.Level != Medium {
		t.Errorf("without the home: %s, want medium", a)
	}
}
