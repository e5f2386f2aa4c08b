package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/autoshell/agent/testenv"
)

// batchFixture is a real OpenSSH sshd on loopback and an operator setup
// that reaches it from an inventory: an ssh_config whose "Host *" block
// gives the key, the user and a known_hosts file with the host's key for
// [127.0.0.1]:port, so inventory hosts with ansible_host=127.0.0.1 and
// ansible_port reach it with host-key checking on. Every inventory host is
// an alias of the same sshd (or of a second one); they share the real
// home, so each host works on its own files under dir.
type batchFixture struct {
	t          *testing.T
	sshd       *testenv.SSHD
	dir        string // scratch directory in the real home
	sshConfig  string
	knownHosts string
	approve    string
}

// batchSSHDConfig lets a batch's connections in at once: sshd drops
// unauthenticated connections beyond MaxStartups (default 10:30:100).
const batchSSHDConfig = "MaxStartups 200\nMaxSessions 50\n"

func newBatchFixture(t *testing.T) *batchFixture {
	t.Helper()
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: batchSSHDConfig})
	dir, err := os.MkdirTemp(d.Home, "agent-batch-test-") // not a dot-directory: safe steps may not read those
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &batchFixture{t: t, sshd: d, dir: dir, approve: "medium"}
	if os.Geteuid() == 0 {
		f.approve = "all" // as root the home is /root, a system path
	}
	tmp := t.TempDir()
	f.knownHosts = filepath.Join(tmp, "known_hosts")
	f.addKnownHosts(d.KnownHosts)
	f.sshConfig = filepath.Join(tmp, "ssh_config")
	cfg := fmt.Sprintf("Host *\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  ConnectTimeout 10\n",
		d.User, d.IdentityFile, f.knownHosts)
	if err := os.WriteFile(f.sshConfig, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI", "true")
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	return f
}

// addKnownHosts appends a known_hosts file to the operator's.
func (f *batchFixture) addKnownHosts(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	kh, err := os.OpenFile(f.knownHosts, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	defer kh.Close()
	if _, err := kh.Write(b); err != nil {
		f.t.Fatal(err)
	}
}

// writeFile writes a file in the test's temporary directory.
func (f *batchFixture) writeFile(name, content string) string {
	f.t.Helper()
	p := filepath.Join(f.t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// inventory writes an INI inventory: web01…web12 and db01…db10 on the
// fixture's sshd (22 hosts), then extra.
func (f *batchFixture) inventory(extra string) string {
	port := f.sshd.Port
	inv := fmt.Sprintf(`[web]
web[01:12] ansible_host=127.0.0.1 ansible_port=%d

[db]
db[01:10] ansible_host=127.0.0.1 ansible_port=%d

[web:vars]
role=frontend

[db:vars]
role=database

[all:vars]
greeting=hello
dir=%s
%s`, port, port, f.dir, extra)
	return f.writeFile("hosts.ini", inv)
}

func batchHostNames() []string {
	var names []string
	for i := 1; i <= 12; i++ {
		names = append(names, fmt.Sprintf("web%02d", i))
	}
	for i := 1; i <= 10; i++ {
		names = append(names, fmt.Sprintf("db%02d", i))
	}
	return names
}

// agent runs agent in-process with the fixture's ssh_config.
func (f *batchFixture) agent(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = Main(append([]string{"-F", f.sshConfig}, args...), strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// greetPlan writes each host's own file from its inventory variables; db
// hosts (a condition over group_names) append a line.
const greetPlan = `name: greet
phases:
  - phase: 1
    goal: write the host's file
    steps:
      - tool: write_file
        parameters:
          file_path: "{{dir}}/{{inventory_hostname}}.txt"
          content: "{{greeting}} from {{inventory_hostname}} ({{role}})\n"
      - tool: execute_command
        parameters:
          command: "cat {{dir}}/{{inventory_hostname}}.txt"
        save_output_as: written
  - phase: 2
    goal: mark the databases
    steps:
      - tool: execute_command
        condition: "'db' in group_names and written.startswith('hello')"
        parameters:
          command: "echo db >> {{dir}}/{{inventory_hostname}}.txt"
`

// checkGreeted checks the end state of greetPlan on host name.
func (f *batchFixture) checkGreeted(name string) {
	f.t.Helper()
	role, tail := "frontend", ""
	if strings.HasPrefix(name, "db") {
		role, tail = "database", "db\n"
	}
	want := fmt.Sprintf("hello from %s (%s)\n%s", name, role, tail)
	b, err := os.ReadFile(filepath.Join(f.dir, name+".txt"))
	if err != nil || string(b) != want {
		f.t.Errorf("%s: file %q (%v), want %q", name, b, err, want)
	}
}

// tableRow finds host's row in the summary table.
func tableRow(t *testing.T, out, host string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(host) + `\s+.*$`).FindString(out)
	if m == "" {
		t.Fatalf("no summary row for %s in:\n%s", host, out)
	}
	return m
}

// TestBatchPlanAllHosts runs a plan on 22 inventory hosts over real sshd,
// 8 at a time: every host gets its own file from its own variables.
func TestBatchPlanAllHosts(t *testing.T) {
	f := newBatchFixture(t)
	plan := f.writeFile("greet.yaml", greetPlan)
	inv := f.inventory("")
	out, errOut, code := f.agent("run", plan, "-i", inv, "--forks", "8", "--approve", f.approve)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, name := range batchHostNames() {
		f.checkGreeted(name)
		// 3 steps on every host (the db step is skipped on web hosts), 1 file changed
		if row := tableRow(t, out, name); !regexp.MustCompile(`^\S+\s+ok\s+plan\s+3\s+1\s`).MatchString(row) {
			t.Errorf("row %q", row)
		}
	}
	if !strings.Contains(out, "22 hosts: 22 ok, 0 failed, 0 not run") {
		t.Errorf("summary:\n%s", out)
	}
	if n := strings.Count(out, "] ok "); n != 22 {
		t.Errorf("%d host lines, want 22:\n%s", n, out)
	}
}

// TestBatchUnreachableHosts: hosts whose port is closed fail, the others
// are done, and the exit status is 3.
func TestBatchUnreachableHosts(t *testing.T) {
	f := newBatchFixture(t)
	closed := closedPort(t)
	inv := f.inventory(fmt.Sprintf("\n[down]\ndown[1:3] ansible_host=127.0.0.1 ansible_port=%d\n", closed))
	plan := f.writeFile("greet.yaml", greetPlan)
	out, errOut, code := f.agent("run", plan, "-i", inv, "--forks", "10", "--approve", f.approve)
	if code != exitSomeHosts {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitSomeHosts, out, errOut)
	}
	for _, name := range batchHostNames() {
		f.checkGreeted(name)
	}
	for _, name := range []string{"down1", "down2", "down3"} {
		if row := tableRow(t, out, name); !strings.Contains(row, "FAILED") || !strings.Contains(row, "connect") {
			t.Errorf("row %q", row)
		}
	}
	if !strings.Contains(out, "25 hosts: 22 ok, 3 failed, 0 not run") {
		t.Errorf("summary:\n%s", out)
	}
}

// TestBatchChangedHostKey: one host presents another key than known_hosts
// holds for it; it is refused (never connected to), the others are done.
func TestBatchChangedHostKey(t *testing.T) {
	f := newBatchFixture(t)
	other := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: batchSSHDConfig})
	// known_hosts says [127.0.0.1]:other.Port has the first sshd's key:
	// the host "changed" its key since.
	kh := f.writeFile("other_known_hosts", knownhosts.Line([]string{knownhosts.Normalize(other.Addr)}, f.sshd.HostKey)+"\n")
	f.addKnownHosts(kh)
	inv := f.inventory(fmt.Sprintf("\n[moved]\nmoved ansible_host=127.0.0.1 ansible_port=%d ansible_ssh_private_key_file=%s\n", other.Port, other.IdentityFile))
	plan := f.writeFile("greet.yaml", greetPlan)
	out, errOut, code := f.agent("run", plan, "-i", inv, "--approve", f.approve, "--limit", "all:!~^db0[2-9]$")
	if code != exitSomeHosts {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitSomeHosts, out, errOut)
	}
	// One line in the progress line and the table: the reason and where
	// the old key is; OpenSSH's whole warning once, on stderr.
	short := regexp.QuoteMeta("host key for "+knownhosts.Normalize(other.Addr)+" changed (") + `\S*known_hosts:\d+\)$`
	if row := tableRow(t, out, "moved"); !strings.Contains(row, "FAILED") || !regexp.MustCompile(short).MatchString(row) {
		t.Errorf("row %q, want %q", row, short)
	}
	if !regexp.MustCompile(`(?m)^\[\s*\d+/\d+\] FAILED +moved .*— .*host key verification failed: ` + short).MatchString(out) {
		t.Errorf("no one-line progress line for moved:\n%s", out)
	}
	if strings.Contains(out, "@@@") {
		t.Errorf("the warning's @@@ lines on stdout:\n%s", out)
	}
	if n := strings.Count(errOut, "REMOTE HOST IDENTIFICATION HAS CHANGED"); n != 1 {
		t.Errorf("the warning is on stderr %d times, want once:\n%s", n, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "moved.txt")); err == nil {
		t.Errorf("moved.txt written on a host with a changed key")
	}
	for _, name := range batchHostNames() {
		if strings.HasPrefix(name, "db") && name != "db01" && name != "db10" {
			if tableRowOK(out, name) {
				t.Errorf("%s selected despite --limit", name)
			}
			continue
		}
		f.checkGreeted(name)
	}
}

func tableRowOK(out, host string) bool {
	return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(host) + `\s`).MatchString(out)
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// TestBatchAuthFailureAndTimeout: a host that rejects the operator's key
// and one that accepts TCP but never speaks SSH (ConnectTimeout) fail; the
// others are done.
func TestBatchAuthFailureAndTimeout(t *testing.T) {
	f := newBatchFixture(t)
	other := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: batchSSHDConfig})
	f.addKnownHosts(other.KnownHosts) // the right key: only the login fails
	silent, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never a banner
		}
	}()
	f.prependConfig("Host 127.0.0.2\n  ConnectTimeout 2\n")
	inv := f.inventory(fmt.Sprintf("\n[bad]\nlocked ansible_host=127.0.0.1 ansible_port=%d\nsilent ansible_host=127.0.0.2 ansible_port=%d\n",
		other.Port, silent.Addr().(*net.TCPAddr).Port))
	plan := f.writeFile("greet.yaml", greetPlan)
	out, errOut, code := f.agent("run", plan, "-i", inv, "--approve", f.approve, "--limit", "web:bad")
	if code != exitSomeHosts {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitSomeHosts, out, errOut)
	}
	if row := tableRow(t, out, "locked"); !strings.Contains(row, "FAILED") || !strings.Contains(row, "authentication failed") {
		t.Errorf("row %q", row)
	}
	if row := tableRow(t, out, "silent"); !strings.Contains(row, "FAILED") || !strings.Contains(row, "connect") {
		t.Errorf("row %q", row)
	}
	for _, name := range batchHostNames()[:12] {
		f.checkGreeted(name)
	}
	if !strings.Contains(out, "14 hosts: 12 ok, 2 failed, 0 not run") {
		t.Errorf("summary:\n%s", out)
	}
}

// prependConfig puts block before the "Host *" block of the operator's
// ssh_config (the first value of a keyword wins).
func (f *batchFixture) prependConfig(block string) {
	f.t.Helper()
	b, err := os.ReadFile(f.sshConfig)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.sshConfig, append([]byte(block), b...), 0o644); err != nil {
		f.t.Fatal(err)
	}
}
