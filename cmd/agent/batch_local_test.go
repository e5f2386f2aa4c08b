package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBatchLocalConnection: a host with ansible_connection=local runs
// through the local transport, next to SSH hosts, in a batch and in its
// undo; its SSH settings point at a closed port, so dialling it over SSH
// would fail. The summary's undo command restores it locally too.
func TestBatchLocalConnection(t *testing.T) {
	f := newBatchFixture(t)
	closed := closedPort(t)
	inv := f.inventory(fmt.Sprintf("\n[ctl]\nctl1 ansible_connection=local ansible_host=127.0.0.1 ansible_port=%d role=database\nctl2 ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=%d role=frontend\n", closed, f.sshd.Port))
	plan := f.writeFile("greet.yaml", greetPlan)
	out, errOut, code := f.agent("run", plan, "-i", inv, "--limit", "web01:ctl1:ctl2", "--approve", f.approve)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	f.checkGreeted("web01")
	want := "hello from ctl1 (database)\n"
	if b, err := os.ReadFile(filepath.Join(f.dir, "ctl1.txt")); err != nil || string(b) != want {
		t.Errorf("ctl1.txt = %q (%v), want %q", b, err, want)
	}
	if !strings.Contains(out, "3 hosts: 3 ok, 0 failed, 0 not run") {
		t.Errorf("summary:\n%s", out)
	}
	m := regexp.MustCompile(`to put them back: agent (undo \S+ .*-i \S+) \(one host: add --limit HOST\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no undo command in the summary:\n%s", out)
	}
	out, errOut, code = f.agent(append(strings.Fields(m[1]), "--limit", "ctl1")...)
	if code != 0 || !strings.Contains(out, "on ctl1: 1 file restored") {
		t.Fatalf("undo --limit ctl1: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "ctl1.txt")); !os.IsNotExist(err) {
		t.Errorf("ctl1.txt after its undo: %v", err)
	}
}

// TestBatchUnsupportedConnection: a selected host whose
// ansible_connection agent has no transport for (docker, winrm) is a
// usage error naming it before any host runs; unselected, it is no
// obstacle.
func TestBatchUnsupportedConnection(t *testing.T) {
	f := newBatchFixture(t)
	inv := f.inventory("\n[containers]\nc1 ansible_connection=docker role=frontend\n")
	plan := f.writeFile("greet.yaml", greetPlan)
	out, errOut, code := f.agent("run", plan, "-i", inv, "--limit", "web01:c1", "--approve", f.approve)
	if code != exitUsage || !strings.Contains(errOut, "host c1 has ansible_connection=docker") {
		t.Fatalf("exit %d, want %d naming c1 and docker\nstdout:\n%s\nstderr:\n%s", code, exitUsage, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "web01.txt")); !os.IsNotExist(err) {
		t.Errorf("web01 ran although the selection was refused: %v", err)
	}
	out, errOut, code = f.agent("run", plan, "-i", inv, "--limit", "web01", "--approve", f.approve)
	if code != 0 {
		t.Fatalf("without c1: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	f.checkGreeted("web01")
}
