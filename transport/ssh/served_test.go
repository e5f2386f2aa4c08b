package ssh

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
)

// This test binary is also the launcher its served workers run.
func TestMain(m *testing.M) {
	confine.MaybeLaunch()
	os.Exit(m.Run())
}

// serveArgv is this test binary as a launcher serving as the worker.
func serveArgv() []string { return []string{os.Args[0], confine.LaunchArg, confine.ServeFlag} }

// A served worker (Transport.ServeWorker) is the shell worker's equal:
// commands share it, state does not leak between them, background output
// is not the next command's, statuses are the shell's, a timeout kills
// the command's group, a command that kills the worker fails alone, and a
// command with another wrapper runs under it.
func TestServedWorker(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	tr.ServeWorker(serveArgv())
	first := runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout
	if comm, _ := os.ReadFile("/proc/" + strings.TrimSpace(first) + "/cmdline"); !strings.Contains(string(comm), confine.ServeFlag) {
		t.Fatalf("the command's parent is %q, not the served worker", comm)
	}
	runOK(t, tr, transport.Command{Command: "cd /; X=leak; export Y=leak; umask 077"})
	if got := runOK(t, tr, transport.Command{Command: `echo "$PWD ${X:-} ${Y:-} $(umask) $# $PPID"`}).Stdout; got != h.Home+"   0022 0 "+first {
		t.Errorf("state leaked, or another worker: %q", got)
	}
	if res := runOK(t, tr, transport.Command{Command: "echo out; echo err >&2; exit 7", Dir: "/tmp"}); res.Stdout != "out\n" || res.Stderr != "err\n" || res.ExitCode != 7 {
		t.Errorf("got %+v", res)
	}
	if res := runOK(t, tr, transport.Command{Command: "kill -TERM $$"}); res.ExitCode != 143 {
		t.Errorf("killed by TERM: exit %d", res.ExitCode)
	}
	if _, err := tr.Run(context.Background(), transport.Command{Command: "true", Dir: "/no/such"}); err == nil || !strings.Contains(err.Error(), "/no/such") {
		t.Errorf("a missing directory: %v", err)
	}
	res := runOK(t, tr, transport.Command{Command: "(sleep 0.3; echo late) & echo now"})
	if res.Stdout != "now\n" {
		t.Errorf("stdout = %q", res.Stdout)
	}
	time.Sleep(400 * time.Millisecond)
	if res := runOK(t, tr, transport.Command{Command: "echo next"}); res.Stdout != "next\n" {
		t.Errorf("after a background process: %q", res.Stdout)
	}
	marker := filepath.Join(t.TempDir(), "agentserved")
	sleep, _ := exec.LookPath("sleep")
	os.Symlink(sleep, marker)
	if _, err := tr.Run(context.Background(), transport.Command{Command: marker + " 100 & " + marker + " 101", Timeout: 200 * time.Millisecond}); !errors.Is(err, transport.ErrTimeout) {
		t.Errorf("err = %v, want a timeout", err)
	}
	waitGone(t, marker)
	if out := runOK(t, tr, transport.Command{Command: "echo $AGENT_T", Wrap: []string{"env", "AGENT_T=wrapped"}}).Stdout; out != "wrapped\n" {
		t.Errorf("under env: %q", out)
	}
	if _, err := tr.Run(context.Background(), transport.Command{Command: "kill -9 $PPID; sleep 0.2"}); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("a command killing its worker: %v", err)
	}
	again := runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout
	if comm, _ := os.ReadFile("/proc/" + strings.TrimSpace(again) + "/cmdline"); again == first || !strings.Contains(string(comm), confine.ServeFlag) {
		t.Errorf("after the worker was killed: parent %s (%q), was %s", again, comm, first)
	}
	// Back to the shell.
	tr.ServeWorker(nil)
	if comm, _ := os.ReadFile("/proc/" + strings.TrimSpace(runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout) + "/cmdline"); strings.Contains(string(comm), confine.ServeFlag) {
		t.Errorf("ServeWorker(nil): still served (%q)", comm)
	}
}

// waitGone waits until no process runs marker, and fails the test (after
// killing them) when some still do after 5 s: they survived their
// command's timeout.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for exec.Command("pgrep", "-f", marker).Run() == nil {
		if time.Now().After(deadline) {
			exec.Command("pkill", "-9", "-f", marker).Run()
			t.Fatalf("%s survived its command's timeout", marker)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A command whose Wrap is the served launcher's own rules runs confined,
// with no launcher process between the worker and its shell.
func TestServedWorkerConfines(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	tr.ServeWorker(serveArgv())
	dir := scratchDir(t, h.Host)
	rules := filepath.Join(dir, "safe.rules")
	if err := confine.WriteRuleset(rules, confine.Compile(confine.Spec{Devices: []string{"/dev/null"}})); err != nil {
		t.Fatal(err)
	}
	worker := runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout
	wrap := []string{os.Args[0], confine.LaunchArg, confine.RulesFlag, rules, "--"}
	res := runOK(t, tr, transport.Command{Command: "echo $PPID; echo x > new", Dir: dir, Wrap: wrap, Ahead: true})
	if res.Stdout != worker || res.ExitCode == 0 {
		t.Errorf("confined: %+v (worker %s)", res, worker)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("a read-only command wrote")
	}
	if res := runOK(t, tr, transport.Command{Command: "echo x > new", Dir: dir}); res.ExitCode != 0 {
		t.Errorf("unconfined after confined: %+v", res)
	}
}

// A served worker that does not start leaves the shell to serve, said once.
func TestServedWorkerThatFails(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	var warns warnings
	tr := dial(t, hostConfig(srv.Host), Options{Warn: warns.warn})
	tr.ServeWorker([]string{"/no/such/agent-launch", confine.ServeFlag})
	for range 2 {
		if res := runOK(t, tr, transport.Command{Command: "echo fine"}); res.Stdout != "fine\n" {
			t.Errorf("got %q", res.Stdout)
		}
	}
	if n := strings.Count(warns.String(), "did not start as the worker"); n != 1 {
		t.Errorf("warned %d times: %q", n, warns.String())
	}
}

// A shell worker already running becomes the served worker by exec: the
// same process (PID) and session, no new login shell; what it started
// ahead is ended first. Under /bin/sh with setsid (no bash) too.
func TestShellWorkerBecomesServed(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	tr := dial(t, hostConfig(h.Host), Options{})
	shell := runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout
	tr.ServeWorker(serveArgv())
	served := runOK(t, tr, transport.Command{Command: "echo $PPID"}).Stdout
	comm, _ := os.ReadFile("/proc/" + strings.TrimSpace(served) + "/cmdline")
	if served != shell || !strings.Contains(string(comm), confine.ServeFlag) {
		t.Fatalf("the worker %s (%q) is not the shell %s become the served worker", served, comm, shell)
	}
	// Nothing of the shell's is left (the /bin/sh it started ahead would
	// still be a child of the same PID): its one child is the command's
	// shell.
	if out := runOK(t, tr, transport.Command{Command: "ps -o pid= --ppid $PPID | wc -l"}).Stdout; strings.TrimSpace(out) != "1" {
		t.Errorf("the worker has %s children, want the command's shell only", out)
	}
	if res := runOK(t, tr, transport.Command{Command: "echo out; echo err >&2; exit 3"}); res.Stdout != "out\n" || res.Stderr != "err\n" || res.ExitCode != 3 {
		t.Errorf("after the exec: %+v", res)
	}
}

// A shell worker whose exec into the served worker fails, with the next
// command's request sent behind it (worker.become does not wait), leaves
// that command to run once, on a session of its own; the next command
// starts the served worker afresh, which fails too, said once, and the
// shell serves.
func TestShellWorkerExecFails(t *testing.T) {
	h := testenv.StartSSHD(t, testenv.SSHDOptions{})
	var warns warnings
	tr := dial(t, hostConfig(h.Host), Options{Warn: warns.warn})
	runOK(t, tr, transport.Command{Command: "true"})
	tr.ServeWorker([]string{"/no/such/agent-launch", confine.ServeFlag})
	dir := scratchDir(t, h.Host)
	for range 3 {
		if res := runOK(t, tr, transport.Command{Command: "echo x >> n; echo fine", Dir: dir}); res.Stdout != "fine\n" || res.ExitCode != 0 {
			t.Errorf("got %+v", res)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "n")); err != nil || string(b) != "x\nx\nx\n" {
		t.Errorf("three commands left %q, %v: each must run once", b, err)
	}
	if n := strings.Count(warns.String(), "did not start as the worker"); n != 1 {
		t.Errorf("warned %d times: %q", n, warns.String())
	}
}
