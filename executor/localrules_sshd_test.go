package executor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// Over real sshd, download_file keeps the operator's side to the same
// rules as locally: a host-supplied .pth is not written into the
// operator's user site-packages (even at --approve all), and a file it
// creates in the working directory goes into the session's journal of
// host "local", whose restore removes it. Judged by the scratch home.
func TestDownloadLocalRulesSSHD(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(home)
	src := filepath.Join(t.TempDir(), "evil.pth")
	must(t, os.WriteFile(src, []byte("import os\n"), 0o644))
	must(t, os.Chmod(filepath.Dir(src), 0o755))
	site := filepath.Join(home, ".local/lib/python3.12/site-packages")
	must(t, os.MkdirAll(site, 0o755))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := sshtr.Resolve(d.Alias, sshtr.ResolveOptions{ConfigFile: d.SSHConfig})
	must(t, err)
	tr, err := sshtr.Dial(ctx, cfg, sshtr.Options{})
	must(t, err)
	t.Cleanup(func() { tr.Close() })
	state := t.TempDir()
	a, err := audit.Open(filepath.Join(state, "audit.log"))
	must(t, err)
	t.Cleanup(func() { a.Close() })
	rj, err := journal.Open(state, "s1", d.Alias)
	must(t, err)
	lj, err := journal.Open(state, "s1", "local")
	must(t, err)
	e := New(Config{Transport: tr, Policy: safety.DefaultPolicy(), Approver: safety.NewApprover(safety.ModeAll, nil),
		Audit: a, Journal: rj, LocalJournal: lj, Session: "s1"})
	run := func(local string) bool {
		t.Helper()
		p := mustParse(t, "steps:\n  - tool: download_file\n    parameters: {remote_path: \""+src+"\", local_path: \""+local+"\"}\n")
		sum, err := e.RunPlan(ctx, p)
		if err != nil {
			t.Fatalf("RunPlan %s: %v", local, err)
		}
		return sum.Success
	}
	if run("~/.local/lib/python3.12/site-packages/") {
		t.Error("download into the user site-packages succeeded")
	}
	if _, err := os.Lstat(filepath.Join(site, "evil.pth")); err == nil {
		t.Fatal("the host's .pth landed in the operator's site-packages")
	}
	if !run("fetched.pth") {
		t.Fatal("download into the working directory failed")
	}
	got := filepath.Join(home, "fetched.pth")
	if _, err := os.Stat(got); err != nil {
		t.Fatalf("download did not write %s: %v", got, err)
	}
	if _, err := lj.Restore(ctx, restorer{}); err != nil {
		t.Fatalf("restore of the operator's files: %v", err)
	}
	if _, err := os.Lstat(got); err == nil {
		t.Errorf("undo of host local left %s", got)
	}
}
