package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
)

// TestNewHomeDotNameHighAtMedium: at --approve medium with the classifier
// alone (the kernel off), a new dot-name directly in ~ is high and not
// created — `cp ~/work/f ~/.profile2` ran there (the corpus's round trip
// over sshd), while the kernel's rules refuse it; a plain new name still
// runs (medium), and so does a dot-name deeper in ~.
func TestNewHomeDotNameHighAtMedium(t *testing.T) {
	localState(t)
	home := tempHome(t)
	t.Setenv("HOME", home)
	if err := os.WriteFile(filepath.Join(home, "work", "f"), []byte("f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	o := engine.HostOptions{Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeMedium, nil), Enforcement: engine.Enforcement{Off: true}}
	for _, tc := range []struct {
		cmd, made, risk, status string
	}{
		{"cp ~/work/f ~/.profile2", ".profile2", "high", "denied"},
		{"mv ~/work/f ~/.f", ".f", "high", "denied"},
		{"echo x > ~/.newrc", ".newrc", "high", "denied"},
		{"cp ~/work/f ~/notes", "notes", "medium", "ok"},
		{"cp ~/work/f ~/work/.hidden", "work/.hidden", "medium", "ok"},
	} {
		steps, _ := run(t, open, o, shellStep(tc.cmd))
		if len(steps) != 1 || steps[0].Risk != tc.risk || steps[0].Status != tc.status {
			t.Errorf("%s: %s, want %s and %s", tc.cmd, show(steps), tc.risk, tc.status)
		}
		_, err := os.Lstat(filepath.Join(home, tc.made))
		if made := err == nil; made != (tc.status == "ok") {
			t.Errorf("%s: ~/%s made %v", tc.cmd, tc.made, made)
		}
	}
}
