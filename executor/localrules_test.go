package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/safety"
)

// download_file writes on the operator's machine only under the working
// directory and --allow-write, never at a protected or autorun path or a
// dot-entry of ~ — whatever the approval (--approve all here) — and
// journals what it creates or replaces, so the journal's restore removes
// or puts back the operator's file byte for byte and mode for mode.
// Judged by the scratch home's files.
func TestDownloadLocalRules(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(home)
	other := t.TempDir() // outside the working directory
	h := newHarness(t)
	pth := h.write("evil.pth", "import os; os.system('touch /tmp/owned')\n")
	hgrc := h.write(".hgrc", "[hooks]\npre-commit = sh -c 'id'\n")
	site := filepath.Join(home, ".local/lib/python3.12/site-packages")
	must(t, os.MkdirAll(site, 0o755))
	must(t, os.MkdirAll(filepath.Join(home, ".config/tmux"), 0o755))
	run := func(e *Executor, remote, local string, overwrite bool) bool {
		t.Helper()
		ow := ""
		if overwrite {
			ow = ", overwrite: true"
		}
		p := mustParse(t, "steps:\n  - tool: download_file\n    parameters: {remote_path: \""+remote+"\", local_path: \""+local+"\""+ow+"}\n")
		sum, err := e.RunPlan(context.Background(), p)
		if err != nil {
			t.Fatalf("RunPlan %s: %v", local, err)
		}
		return sum.Success
	}
	e := h.executor(safety.ModeAll, false, nil)
	for _, c := range []struct{ remote, local, lands string }{
		{pth, "~/.local/lib/python3.12/site-packages/evil.pth", filepath.Join(site, "evil.pth")},
		{pth, site, filepath.Join(site, "evil.pth")}, // into the directory
		{hgrc, "~/.hgrc", filepath.Join(home, ".hgrc")},
		{hgrc, "~", filepath.Join(home, ".hgrc")}, // the remote name in ~
		{hgrc, "~/.config/tmux/tmux.conf", filepath.Join(home, ".config/tmux/tmux.conf")},
		{hgrc, "~/.newdot", filepath.Join(home, ".newdot")},
		{pth, "~/.config/agent/policy.yaml", filepath.Join(home, ".config/agent/policy.yaml")},
		{pth, filepath.Join(other, "x.txt"), filepath.Join(other, "x.txt")},
	} {
		if run(e, c.remote, c.local, false) {
			t.Errorf("download to %s succeeded", c.local)
		}
		if _, err := os.Lstat(c.lands); err == nil {
			t.Errorf("download to %s wrote %s", c.local, c.lands)
		}
	}
	// In the working directory: created, and the journal removes it again.
	if !run(e, pth, "report.txt", false) || h.read(filepath.Join(home, "report.txt")) != h.read(pth) {
		t.Fatal("download into the working directory failed")
	}
	// Over an existing file, approved: replaced, then put back.
	notes := filepath.Join(home, "notes.txt")
	must(t, os.WriteFile(notes, []byte("mine\n"), 0o640))
	must(t, os.Chmod(notes, 0o640))
	if !run(e, hgrc, "~/notes.txt", true) || h.read(notes) != h.read(hgrc) {
		t.Fatal("approved download over notes.txt failed")
	}
	// --allow-write opens another directory.
	e.cfg.Policy.AllowWrite = []string{other + "/**"} // as ParseAllowWrite gives it
	if !run(e, pth, filepath.Join(other, "x.txt"), false) {
		t.Fatal("download under --allow-write failed")
	}
	if _, err := h.jrnl.Restore(context.Background(), restorer{}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	for _, gone := range []string{filepath.Join(home, "report.txt"), filepath.Join(other, "x.txt")} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("undo left %s", gone)
		}
	}
	if fi, err := os.Stat(notes); err != nil || h.read(notes) != "mine\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("undo did not restore notes.txt: %v %v", fi, err)
	}
}

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
	t.Chdir(home)
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

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		p, entry string
		want     bool
	}{
		{"/home/u/.hgrc", "/home/u/.hgrc", true},
		{"/home/u/.hgrc.d/x", "/home/u/.hgrc", false},
		{"/home/u/.local/lib/python3.12/site-packages/a.pth", "/home/u/.local/lib", true},
		{"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_*_key", true},
		{"/etc/ssh/ssh_config", "/etc/ssh/ssh_host_*_key", false},
		{"/home/u/[x]/f", "/home/u/[x]", true}, // a literal bracket name
		{"/home/u", "/home/u/work", false},
		{"/anything", "/", true},
		{"/x", "relative", false},
		{"/x", "", false},
	} {
		if got := under(c.p, c.entry); got != c.want {
			t.Errorf("under(%q, %q) = %v, want %v", c.p, c.entry, got, c.want)
		}
	}
}

// FuzzUnder: a path is under itself and its children are under it; a
// sibling sharing its prefix is not; no input panics.
func FuzzUnder(f *testing.F) {
	for _, s := range []string{"/home/u", "/etc/ssh/ssh_host_*_key", "/", "/a/[x", "rel"} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, p, name string) {
		if !strings.HasPrefix(p, "/") || filepath.Clean(p) != p || strings.ContainsAny(p, "*?[\\") ||
			name == "" || strings.ContainsAny(name, "/*?[\\") || name == "." || name == ".." {
			under(p, name)
			return
		}
		if !under(p, p) || !under(filepath.Join(p, name), p) {
			t.Errorf("%q or its child %q not under it", p, name)
		}
		if p != "/" && under(p+name, p) {
			t.Errorf("%q under %q", p+name, p)
		}
	})
}

// TestDownloadRootWorkingDirectory: a working directory of / grants a
// download nothing (it would be everything); --allow-write still does.
func TestDownloadRootWorkingDirectory(t *testing.T) {
	p := safety.DefaultPolicy()
	home := t.TempDir()
	target := filepath.Join(t.TempDir(), "x.bin")
	if err := localWriteRefusal(p, target, target, home, "/"); err == nil || !strings.Contains(err.Error(), "working directory is /") {
		t.Errorf("cwd /: %v", err)
	}
	if err := localWriteRefusal(p, target, target, home, filepath.Dir(target)); err != nil {
		t.Errorf("cwd the target's directory: %v", err)
	}
	p.AllowWrite = []string{filepath.Dir(target) + "/**"}
	if err := localWriteRefusal(p, target, target, home, "/"); err != nil {
		t.Errorf("cwd / with --allow-write: %v", err)
	}
}
