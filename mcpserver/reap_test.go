package mcpserver

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReapScriptGuards: the script kills a group only when its leader
// still leads it and is as old as the record says: an ID reused by a
// younger or older group, or a process that leads no group, is kept.
func TestReapScriptGuards(t *testing.T) {
	start := func(argv ...string) *exec.Cmd {
		c := exec.Command(argv[0], argv[1:]...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
		return c
	}
	run := func(args ...string) string {
		out, err := exec.Command("sh", append([]string{"-c", reapScript, "reap"}, args...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	alive := func(pid int) bool { return syscall.Kill(pid, 0) == nil }
	leader := start("sleep", "300")
	g := leader.Process.Pid
	// A member that leads no group: sh's background sleep.
	sh := start("sh", "-c", "sleep 301 & echo $! >&2; wait")
	time.Sleep(300 * time.Millisecond)
	var member int
	if out, err := exec.Command("pgrep", "-g", fmt.Sprint(sh.Process.Pid), "-x", "sleep").Output(); err == nil {
		fmt.Sscan(string(out), &member)
	}
	if member == 0 {
		t.Fatal("no member process")
	}
	for _, tc := range []struct {
		arg, want string
	}{
		{fmt.Sprintf("%d:60:120", g), "kept"},     // older than the group: another group's ID now
		{fmt.Sprintf("%d:-20:-10", g), "kept"},    // younger bound below its age
		{fmt.Sprintf("%d:-5:60", member), "kept"}, // not a group leader
		{"4194304:-5:60", "gone"},                 // past pid_max
	} {
		if got := run(tc.arg); got != strings.SplitN(tc.arg, ":", 2)[0]+" "+tc.want {
			t.Errorf("%s: %q, want %s", tc.arg, got, tc.want)
		}
	}
	if !alive(g) || !alive(member) {
		t.Fatal("a kept process was killed")
	}
	if got := run(fmt.Sprintf("%d:-5:60", g)); got != fmt.Sprint(g)+" killed" {
		t.Fatalf("its own group: %q", got)
	}
	leader.Wait()
	if alive(g) {
		t.Error("the group's leader is alive after killed")
	}
}
