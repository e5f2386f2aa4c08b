package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// everyToolPlan exercises each file tool, a command, a shell write and a
// condition on a saved output, in ~/work on the host; LOCAL is a
// directory of the operator's.
const everyToolPlan = `name: every-tool
vars:
  dir: ~/work
phases:
  - phase: 1
    goal: every tool once
    steps:
      - tool: execute_command
        parameters:
          command: cat {{dir}}/a.sh
        save_output_as: out
      - tool: read_file
        parameters:
          file_path: "{{dir}}/a.sh"
        save_output_as: content
      - tool: check_condition
        parameters:
          condition: out == content and 'echo 1' in content
        save_output_as: is_one
      - tool: edit_file
        condition: is_one == True
        parameters:
          file_path: "{{dir}}/a.sh"
          search_pattern: echo 1
          replacement: echo 2
      - tool: write_file
        parameters:
          file_path: "{{dir}}/new.txt"
          content: "written by agent\n"
      - tool: upload_file
        parameters:
          local_path: LOCAL/up.bin
          remote_path: "{{dir}}/up.bin"
      - tool: download_file
        parameters:
          local_path: LOCAL/down.sh
          remote_path: "{{dir}}/a.sh"
      - tool: execute_command
        parameters:
          command: echo shell >> {{dir}}/log.txt
      - tool: execute_command
        parameters:
          command: sh {{dir}}/a.sh
        save_output_as: after
`

// treeOf describes every entry under root: path, mode, owner, content
// hash. Agent's launcher kept on the host (its state directory's
// agent/launch, and the directories made for it) is left out; keptOnly
// checks what is there.
func treeOf(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", p, err))
			return nil
		}
		if rel := strings.TrimPrefix(p, root); agentState(rel) {
			if e.IsDir() && strings.HasSuffix(rel, "/agent") {
				keptOnly(t, filepath.Join(p, "launch"))
				return fs.SkipDir
			}
			if e.IsDir() && path.Base(rel) != ".local" && path.Base(rel) != "state" {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, root), fi.Mode())
		if st, ok := fi.Sys().(interface{ Uid() uint32 }); ok {
			line += fmt.Sprint(" ", st.Uid())
		}
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// agentState says whether rel (a path under a host's root) is agent's
// state directory on the host or one of the directories made for it: a
// home's .local/state/agent (and .local, .local/state), or /tmp/agent-UID.
func agentState(rel string) bool {
	if strings.HasPrefix(rel, "/tmp/agent-") && !strings.Contains(strings.TrimPrefix(rel, "/tmp/"), "/") {
		return true
	}
	for _, tail := range []string{"/.local", "/.local/state", "/.local/state/agent"} {
		if strings.HasSuffix(rel, tail) {
			return true
		}
	}
	return false
}

// keptOnly checks that agent's launch directory holds only what a kept
// launcher leaves: the launcher (0700), its stamp and the levels' rules.
func keptOnly(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		fi, err := e.Info()
		switch {
		case err != nil:
			t.Errorf("%s: %v", n, err)
		case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0:
			t.Errorf("in agent's launch directory on the host: %s %v", n, fi.Mode())
		case strings.HasPrefix(n, "agent-launch-"), strings.HasPrefix(n, "rules-"):
		default:
			t.Errorf("left in agent's launch directory on the host: %s", n)
		}
	}
}

// stepStatuses are the statuses of a --json run's step events, in order.
func stepStatuses(t *testing.T, out string) []string {
	t.Helper()
	var st []string
	for _, line := range strings.Split(out, "\n") {
		var ev struct{ Event, Tool, Status, Output string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "step" {
			st = append(st, ev.Tool+":"+ev.Status)
		}
	}
	return st
}

// TestEveryToolOnDropbearBusyBox runs everyToolPlan on a Dropbear +
// BusyBox host (no bash; with and without an SFTP server): at the default
// approval (no terminal: only safe steps, confined) and at --approve
// medium (confined by the launcher sent to the host:
// --require-enforcement refuses where it could not be), then agent undo,
// then nothing is left on the host.
func TestEveryToolOnDropbearBusyBox(t *testing.T) {
	for _, sftp := range []bool{true, false} {
		t.Run(fmt.Sprintf("sftp=%v", sftp), func(t *testing.T) {
			d := testenv.StartDropbear(t, testenv.DropbearOptions{SFTP: sftp})
			out := everyToolOn(t, dropbearHost{d})
			if said := strings.Count(out, "files go through the shell"); said != map[bool]int{true: 0, false: 1}[sftp] {
				t.Errorf("SFTP %v: the shell transfer said %d times:\n%s", sftp, said, out)
			}
		})
	}
}

// planHost is a host everyToolOn runs on: where its files are here, and
// the tree compared before and after.
type planHost interface {
	Path(p string) string
	Mkdir(p string, mode fs.FileMode) error
	WriteFile(p string, data []byte, mode fs.FileMode) error
	treeRoot() string
	host() testenv.Host
}

type dropbearHost struct{ *testenv.Dropbear }

func (d dropbearHost) treeRoot() string   { return d.Root }
func (d dropbearHost) host() testenv.Host { return d.Host }

// sshdHost is an OpenSSH sshd whose sessions have HOME set to a scratch
// directory (commands and files run as the tester, on this machine).
type sshdHost struct {
	*testenv.SSHD
	home string
}

func (s sshdHost) Path(p string) string { return p }
func (s sshdHost) Mkdir(p string, mode fs.FileMode) error {
	if err := os.Mkdir(p, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}
func (s sshdHost) WriteFile(p string, data []byte, mode fs.FileMode) error {
	if err := os.WriteFile(p, data, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}
func (s sshdHost) treeRoot() string { return s.home }
func (s sshdHost) host() testenv.Host {
	h := s.Host
	h.Home = s.home
	return h
}

// everyToolOn runs the plan on the host and returns what the --approve
// medium run printed.
func everyToolOn(t *testing.T, ph planHost) string {
	d := ph.host()
	if err := ph.Mkdir(d.Home+"/work", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ph.WriteFile(d.Home+"/work/a.sh", []byte("echo 1\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := ph.WriteFile(d.Home+"/work/log.txt", []byte("before\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	// A download writes under the working directory.
	t.Chdir(local)
	up := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 640 KB
	if err := os.WriteFile(filepath.Join(local, "up.bin"), up, 0o644); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(local, "plan.yaml")
	plan := strings.ReplaceAll(everyToolPlan, "LOCAL", local)
	if _, ok := ph.(interface{ flags() []string }); ok {
		// Become root: the plan's files are in the scratch "home", not
		// in root's.
		plan = strings.Replace(plan, "dir: ~/work", "dir: "+d.Home+"/work", 1)
	}
	if err := os.WriteFile(planFile, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI", "true")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	agent := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		pre := []string{"-F", d.SSHConfig, "--ssh-host", d.Alias}
		if f, ok := ph.(interface{ flags() []string }); ok {
			pre = append(pre, f.flags()...)
		}
		code := Main(append(pre, args...), strings.NewReader(""), &out, &errOut)
		return out.String() + errOut.String(), code
	}
	before := treeOf(t, ph.treeRoot())

	out, code := agent("run", planFile, "--json", "--require-enforcement")
	st := stepStatuses(t, out)
	if code != 4 || len(st) < 4 || st[0] != "execute_command:ok" || st[1] != "read_file:ok" || st[2] != "check_condition:ok" || st[3] != "edit_file:denied" {
		t.Fatalf("default approval: exit %d, steps %v (want the safe ones ok, the first change denied, exit 4)\n%s", code, st, out)
	}
	if now := treeOf(t, ph.treeRoot()); now != before {
		t.Fatalf("default approval changed the host:\n%s\nwas\n%s", now, before)
	}

	out, code = agent("run", planFile, "--json", "--approve", "medium", "--require-enforcement")
	medium := out
	st = stepStatuses(t, out)
	if code != 0 || strings.Count(strings.Join(st, " "), ":ok") != 9 {
		t.Fatalf("--approve medium: exit %d, steps %v\n%s", code, st, out)
	}
	if !strings.Contains(out, `"output":"2\n"`) {
		t.Errorf("the edited script does not print 2:\n%s", out)
	}
	if b, _ := os.ReadFile(ph.Path(d.Home + "/work/up.bin")); !bytes.Equal(b, up) {
		t.Errorf("uploaded %d bytes, want %d", len(b), len(up))
	}
	if b, _ := os.ReadFile(filepath.Join(local, "down.sh")); string(b) != "echo 2\n" {
		t.Errorf("downloaded %q", b)
	}
	if b, _ := os.ReadFile(ph.Path(d.Home + "/work/log.txt")); string(b) != "before\nshell\n" {
		t.Errorf("the shell's write: %q", b)
	}

	out, code = agent("undo")
	if code != 0 {
		t.Fatalf("undo: exit %d\n%s", code, out)
	}
	if now := treeOf(t, ph.treeRoot()); now != before {
		t.Errorf("left on the host after undo:\n%s\nwas\n%s\nundo said:\n%s", now, before, out)
	}
	if _, err := os.Lstat(filepath.Join(local, "down.sh")); err == nil {
		t.Errorf("undo left the downloaded %s on this machine; undo said:\n%s", filepath.Join(local, "down.sh"), out)
	}
	return medium
}

// A run killed with kill -9 leaves its launcher directory on the host;
// the next run on that host removes it when it ends (its owner, the
// killed run's connection process, is gone), and nothing is left.
func TestKilledRunsLauncherRemovedByTheNext(t *testing.T) {
	d := testenv.StartDropbear(t, testenv.DropbearOptions{})
	if err := d.Mkdir(d.Home+"/work", 0o755); err != nil {
		t.Fatal(err)
	}
	before := treeOf(t, d.Root)
	local := t.TempDir()
	plan := func(name, command string) string {
		p := filepath.Join(local, name)
		os.WriteFile(p, []byte("name: "+name+"\nphases:\n  - phase: 1\n    goal: x\n    steps:\n      - tool: execute_command\n        parameters:\n          command: "+command+"\n"), 0o644)
		return p
	}
	state := t.TempDir()
	cmd := exec.Command(agentBinary(t), "-F", d.SSHConfig, "--ssh-host", d.Alias, "run", plan("slow.yaml", "sleep 300"), "--require-enforcement", "--ephemeral")
	cmd.Env = append(os.Environ(), "CI=true", "XDG_STATE_HOME="+state)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	launch := d.Path(d.Home + "/.local/state/agent/launch")
	var owner string
	for deadline := time.Now().Add(30 * time.Second); owner == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		owners, _ := filepath.Glob(filepath.Join(launch, "s.*", ".owner"))
		if len(owners) == 1 {
			b, _ := os.ReadFile(owners[0])
			owner = strings.TrimSpace(string(b))
		}
	}
	if owner == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no launcher directory with its owner on the host; agent said:\n%s", out.String())
	}
	pid, _ := strconv.Atoi(strings.Fields(owner)[0])
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); string(comm) != "dropbear\n" {
		t.Errorf("the owner %q is %q, not the connection's dropbear", owner, comm)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
	}
	if left, _ := filepath.Glob(filepath.Join(launch, "s.*")); len(left) != 1 {
		t.Fatalf("after kill -9: %q on the host, want the killed run's directory", left)
	}
	// A directory without an owner record, fresh: kept (it may be a live
	// session of a server agent cannot name).
	if err := os.MkdirAll(filepath.Join(launch, "s.unknown"), 0o700); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	if code := Main([]string{"-F", d.SSHConfig, "--ssh-host", d.Alias, "run", plan("quick.yaml", "cat /etc/passwd"), "--require-enforcement", "--ephemeral"},
		strings.NewReader(""), &o, &e); code != 0 {
		t.Fatalf("the next run: exit %d\n%s%s", code, o.String(), e.String())
	}
	if left, _ := filepath.Glob(filepath.Join(launch, "s.*")); len(left) != 1 || filepath.Base(left[0]) != "s.unknown" {
		t.Fatalf("after the next run: %q on the host, want only s.unknown", left)
	}
	os.RemoveAll(d.Path(d.Home + "/.local"))
	if now := treeOf(t, d.Root); now != before {
		t.Errorf("left on the host:\n%s\nwas\n%s", now, before)
	}
}

// A login user whose home it cannot write: the launcher goes to a private
// directory in /tmp (0700, the user's own), every tool runs confined, and
// nothing is left; where no directory can hold it (/tmp/agent-UID taken
// by root), agent says so and runs with the classifier alone
// (--require-enforcement refuses).
func TestUnwritableHomeOnDropbear(t *testing.T) {
	d := testenv.StartDropbear(t, testenv.DropbearOptions{})
	if err := os.Chown(d.Path(d.Home), 0, 0); err != nil {
		t.Fatal(err)
	}
	if out := everyToolOn(t, dropbearHost{d}); strings.Contains(out, "not enforced") {
		t.Errorf("the launcher not sent:\n%s", out)
	}

	taken := d.Path(fmt.Sprintf("/tmp/agent-%d", testenv.DropbearUID))
	os.RemoveAll(taken) // the launcher kept there by everyToolOn's runs
	if err := os.Mkdir(taken, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI", "true")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	local := t.TempDir()
	planFile := filepath.Join(local, "p.yaml")
	os.WriteFile(planFile, []byte("name: p\nphases:\n  - phase: 1\n    goal: x\n    steps:\n      - tool: execute_command\n        parameters:\n          command: cat /etc/passwd\n"), 0o644)
	agent := func(args ...string) (string, int) {
		var out bytes.Buffer
		code := Main(append([]string{"-F", d.SSHConfig, "--ssh-host", d.Alias}, args...), strings.NewReader(""), &out, &out)
		return out.String(), code
	}
	out, code := agent("run", planFile)
	if code != 0 || !strings.Contains(out, "no directory on the host can hold the launcher") || !strings.Contains(out, "classifier alone") {
		t.Errorf("no directory for the launcher: exit %d (want 0, said once)\n%s", code, out)
	}
	out, code = agent("run", planFile, "--require-enforcement")
	if code == 0 {
		t.Errorf("--require-enforcement without a directory for the launcher: exit 0\n%s", out)
	}
}

// A run addressed as ssh://user@host:port (no ssh_config alias): agent
// undo, with no host flags or with the run's own, reaches the host the
// run reached (before: the local user on port 22, and the run's
// --ssh-host refused).
func TestUndoAfterURIAddressedRun(t *testing.T) {
	d := testenv.StartDropbear(t, testenv.DropbearOptions{SFTP: true})
	if err := d.WriteFile(d.Home+"/f.txt", []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	cfg := filepath.Join(local, "ssh_config")
	os.WriteFile(cfg, []byte("Host 127.0.0.1\n  IdentityFile "+d.IdentityFile+"\n  IdentitiesOnly yes\n  UserKnownHostsFile "+d.KnownHosts+"\n  StrictHostKeyChecking yes\n"), 0o644)
	plan := filepath.Join(local, "p.yaml")
	os.WriteFile(plan, []byte("name: p\nphases:\n  - phase: 1\n    goal: x\n    steps:\n      - tool: write_file\n        parameters:\n          file_path: ~/f.txt\n          content: \"two\\n\"\n"), 0o644)
	t.Setenv("CI", "true")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	agent := func(args ...string) (string, int) {
		var out bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &out)
		return out.String(), code
	}
	uri := fmt.Sprintf("ssh://%s@127.0.0.1:%d", d.User, d.Port)
	for _, undo := range [][]string{{"-F", cfg, "undo"}, {"-F", cfg, "--ssh-host", uri, "undo"}, {"undo"}} {
		if out, code := agent("-F", cfg, "--ssh-host", uri, "run", plan, "--approve", "medium"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
		if b, _ := os.ReadFile(d.Path(d.Home + "/f.txt")); string(b) != "two\n" {
			t.Fatalf("after the run: %q", b)
		}
		if out, code := agent(undo...); code != 0 {
			t.Fatalf("%q: exit %d\n%s", undo, code, out)
		}
		if b, _ := os.ReadFile(d.Path(d.Home + "/f.txt")); string(b) != "one\n" {
			t.Fatalf("%q: %q", undo, b)
		}
	}
}

// The same plan on OpenSSH hosts whose SFTP cannot be used: the
// subsystem off, and an external sftp-server behind a login shell that
// prints when it starts (named with OpenSSH's advice; the shell transfer
// then carries the files).
func TestEveryToolOnSSHDWithoutSFTP(t *testing.T) {
	if _, err := os.Stat("/usr/lib/openssh/sftp-server"); err != nil {
		t.Skip("no OpenSSH sftp-server")
	}
	for _, tc := range []struct{ name, config, bashrc, said string }{
		{"subsystem off", "Subsystem sftp /nonexistent/sftp-server\nSetEnv SHLVL=1 HOME=%s\n", "", "no usable SFTP server"},
		{"noisy bashrc", "Subsystem sftp /usr/lib/openssh/sftp-server\nSetEnv HOME=%s\n", "echo 'Welcome to this host!'\n", "Ensure the remote shell produces no output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, err := os.MkdirTemp("", "agent-sshd-home-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(home) })
			os.Chmod(home, 0o755)
			if tc.bashrc != "" {
				os.WriteFile(filepath.Join(home, ".bashrc"), []byte(tc.bashrc), 0o644)
			}
			d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: fmt.Sprintf(tc.config, home)})
			out := everyToolOn(t, sshdHost{d, home})
			if n := strings.Count(out, "files go through the shell"); n != 1 || !strings.Contains(out, tc.said) {
				t.Errorf("said %d times, want once with %q:\n%s", n, tc.said, out)
			}
		})
	}
}

// sudoHost is the sudo test sshd, logged in as one user and become
// root (-b): the plan works in a scratch directory of root's.
type sudoHost struct {
	sshdHost
	login string
}

func (s sudoHost) flags() []string { return []string{"-b"} }
func (s sudoHost) host() testenv.Host {
	h := s.sshdHost.host()
	h.User = s.login
	return h
}

// The same plan through sudo that requires a terminal (sudoers
// requiretty), as root: agent gives sudo a pty, as Ansible's -b does.
func TestEveryToolWithRequireTTYSudo(t *testing.T) {
	d, su := testenv.StartSudoSSHD(t)
	home, err := os.MkdirTemp("", "agent-tty-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.Chmod(home, 0o755)
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host tty\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		d.Port, su.TTYUser, d.IdentityFile, d.KnownHosts)), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Host.SSHConfig, d.Host.Alias = cfg, "tty"
	everyToolOn(t, sudoHost{sshdHost{d, home}, su.TTYUser})
}
