package safety

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestBracesInBothDialects: a command whose words hold {a,b} touches what
// bash makes of them (a, b) and what /bin/sh on Debian (dash) makes of
// them (the literal name), so that the undo journal saves every name the
// step may create, whichever shell runs it; both are checked against the
// shells on this machine.
func TestBracesInBothDialects(t *testing.T) {
	p := DefaultPolicy()
	an := p.Analyze(`touch x{a,b} && mkdir d{1,2}`, "/home/u")
	var paths []string
	for _, tc := range an.Touches {
		paths = append(paths, tc.Path)
	}
	for _, want := range []string{"xa", "xb", "x{a,b}", "d1", "d2", "d{1,2}"} {
		if !slices.Contains(paths, want) {
			t.Errorf("touches %v lack %s", paths, want)
		}
	}
	if an.Level != Medium {
		t.Errorf("level %s, want medium", an.Assessment)
	}
	// What the shells really create: every name is among the touches.
	for _, sh := range []string{"/bin/sh", "bash", "dash", "busybox"} {
		argv := []string{sh, "-c", "touch x{a,b} && mkdir d{1,2}"}
		if sh == "busybox" {
			argv = []string{"busybox", "sh", "-c", argv[2]}
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			continue
		}
		dir := t.TempDir()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", sh, err, out)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !slices.Contains(paths, e.Name()) {
				t.Errorf("%s created %s, which the classifier does not list", sh, filepath.Join(dir, e.Name()))
			}
		}
	}
}
