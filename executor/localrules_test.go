package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
)

// upload_file reads nothing the policy protects on this machine unless a
// person approves: a secret-named file or a dot-entry of ~ not in
// readable_dotfiles is high, and at --approve medium it does not run.
func TestUploadProtectedLocalRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	must(t, os.WriteFile(filepath.Join(home, ".npmrc"), []byte("//registry/:_authToken=x\n"), 0o600))
	must(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("key\n"), 0o600))
	h := newHarness(t)
	e := h.executor(safety.ModeMedium, false, nil)
	for _, lp := range []string{"~/.npmrc", home + "/.ssh/id_ed25519", "~/.aws/config"} {
		cls, err := e.classifyTool(context.Background(), "upload_file", map[string]any{"local_path": lp, "remote_path": "~/k"})
		if err != nil || cls.risk.Level != safety.High || !strings.Contains(strings.Join(cls.risk.Reasons, "; "), "protected on this machine") {
			t.Errorf("upload %s: %+v %v, want high as protected", lp, cls, err)
		}
	}
	p := mustParse(t, "steps:\n  - tool: upload_file\n    parameters: {local_path: ~/.npmrc, remote_path: ~/npmrc}\n")
	sum, err := e.RunPlan(context.Background(), p)
	if err != nil || sum.Success {
		t.Fatalf("RunPlan uploaded ~/.npmrc: %+v %v", sum, err)
	}
	if cls, _ := e.classifyTool(context.Background(), "upload_file", map[string]any{"local_path": "~/build/app.tgz", "remote_path": "~/x"}); cls.refused != nil || cls.risk.Level >= safety.High {
		t.Errorf("an ordinary file is refused or high: %+v", cls)
	}
}

// download_file over an existing file is high whatever overwrite says: at
// --approve medium the person is asked, and saying no leaves it intact.
func TestDownloadOverExistingAsks(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	h := newHarness(t)
	src := h.write("remote.txt", "new\n")
	dst := filepath.Join(home, "notes.txt")
	must(t, os.WriteFile(dst, []byte("original\n"), 0o644))
	p := mustParse(t, "steps:\n  - tool: download_file\n    parameters: {remote_path: \""+src+"\", local_path: ~/notes.txt, overwrite: true}\n")
	sum, err := h.executor(safety.ModeMedium, false, nil).RunPlan(context.Background(), p)
	if err != nil || sum.Denied != 1 || len(h.asked) != 1 || h.asked[0].Risk.Level != safety.High {
		t.Fatalf("RunPlan: %+v %v, asked %+v", sum, err, h.asked)
	}
	if b, _ := os.ReadFile(dst); string(b) != "original\n" {
		t.Errorf("existing file replaced without approval: %q", b)
	}
}
