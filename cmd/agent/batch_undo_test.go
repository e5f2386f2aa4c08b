package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBatchUndo: the command the batch summary prints undoes the session
// on the inventory hosts it changed, each reached through its inventory
// settings (ansible_host, ansible_port: no ssh_config entry names them);
// --limit undoes one host.
func TestBatchUndo(t *testing.T) {
	f := newBatchFixture(t)
	plan := f.writeFile("greet.yaml", greetPlan)
	inv := f.inventory("")
	web01 := filepath.Join(f.dir, "web01.txt")
	if err := os.WriteFile(web01, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := f.agent("run", plan, "-i", inv, "--limit", "web01:web02:db01", "--approve", f.approve)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, h := range []string{"web01", "web02", "db01"} {
		f.checkGreeted(h)
	}
	// greetPlan appends to db hosts' files with a shell command: that is
	// journaled too, so the summary has no note on unjournaled commands
	// (as root the file is under a system path: the command is high, and
	// what a high command changes may be more than its files).
	if strings.Contains(out, "not journaled") != (f.approve == "all") {
		t.Errorf("note on unjournaled shell commands (approve %s):\n%s", f.approve, out)
	}
	// The note names each command (issue 29: "(2 commands)" alone).
	if f.approve == "all" && !regexp.MustCompile(`not journaled.*\n  db01 step \d+: echo db >> \S+/db01\.txt`).MatchString(out) {
		t.Errorf("the note does not name the command:\n%s", out)
	}
	m := regexp.MustCompile(`to put them back: agent (undo \S+ .*-i \S+) \(one host: add --limit HOST\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no undo command in the summary:\n%s", out)
	}
	undo := strings.Fields(m[1])

	// Plain `agent undo` cannot reach inventory hosts by name: it says
	// how (-i), and restores nothing.
	out, errOut, code = f.agent("undo")
	if code != exitUsage || !strings.Contains(errOut, "agent undo "+undo[1]+" -i INVENTORY") {
		t.Errorf("plain undo after a batch: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	f.checkGreeted("web02")

	out, errOut, code = f.agent(append(undo, "--limit", "web02")...)
	if code != 0 {
		t.Fatalf("undo --limit web02: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "web02.txt")); !os.IsNotExist(err) {
		t.Errorf("web02.txt after its undo: %v\n%s", err, out)
	}
	f.checkGreeted("web01")
	f.checkGreeted("db01")

	// Someone works on db01's file after the session: undo leaves it
	// (exit 3, the other hosts done) until --force.
	db01 := filepath.Join(f.dir, "db01.txt")
	later, err := os.ReadFile(db01)
	if err != nil {
		t.Fatal(err)
	}
	later = append(later, "later work\n"...)
	if err := os.WriteFile(db01, later, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = f.agent(undo...)
	if code != exitSomeHosts || !strings.Contains(errOut, "db01: ") || !strings.Contains(errOut, "use --force") {
		t.Fatalf("undo: exit %d, want %d with db01 skipped\nstdout:\n%s\nstderr:\n%s", code, exitSomeHosts, out, errOut)
	}
	if b, err := os.ReadFile(web01); err != nil || string(b) != "before\n" {
		t.Errorf("web01.txt: %q (%v)\n%s", b, err, out)
	}
	for _, want := range []string{"undid session " + undo[1] + " on web01: 1 file restored", "on web02 was already restored"} {
		if !strings.Contains(out, want) {
			t.Errorf("undo output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(db01); string(b) != string(later) {
		t.Errorf("db01.txt clobbered: %q", b)
	}
	out, errOut, code = f.agent(append(undo, "--limit", "db01", "--force")...)
	if code != 0 || !strings.Contains(out, "undid session "+undo[1]+" on db01: 1 file restored") {
		t.Fatalf("undo --force: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "db01.txt")); !os.IsNotExist(err) {
		t.Errorf("db01.txt after undo --force: %v", err)
	}

	// A session of other hosts, a --limit without -i, -i with --ssh-host.
	for _, tc := range [][]string{
		append(undo, "--limit", "web05"),
		{"undo", undo[1], "--limit", "web01"},
		append(undo, "--ssh-host", "web01"),
	} {
		if _, errOut, code := f.agent(tc...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", tc, code, exitUsage, errOut)
		}
	}
}
