//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// reuseRun runs script under /bin/sh in a process group of its own on a
// thread of r (DoThen), telling r whether the group is gone after it: the
// script's output and the thread's ID. during, if set, runs on the
// thread after the script, before DoThen returns.
func reuseRun(t *testing.T, r *Restrictor, script string, during func(tid int)) (string, int) {
	t.Helper()
	var out []byte
	tid := 0
	if err := r.DoThen(func() bool {
		tid = unix.Gettid()
		c := exec.Command("/bin/sh", "-c", script)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, _ = c.CombinedOutput()
		if during != nil {
			during(tid)
		}
		return c.Process != nil && GroupGone(c.Process.Pid)
	}); err != nil {
		t.Fatal(err)
	}
	return string(out), tid
}

// TestRestrictorReusesThread: with Reuse, a command whose process group
// is gone is followed on its thread by the next command of the same
// rules, which runs as confined as on a thread of its own (no write, no
// secret); a command that left a process in its group, a Do (which
// cannot tell), and rules that moved (a new file granted) each end the
// thread.
func TestRestrictorReusesThread(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	r := restrictor(t, s)
	r.Reuse()
	r.WatchAll()
	attack := "cat " + h + "/work/notes; echo x > " + h + "/work/notes; cat " + h + "/.ssh/id_rsa"
	// The home is under a busy /tmp, whose new entries may move the rules
	// between two commands: ten times in a row is not that.
	followed := func(first string) (string, int) {
		t.Helper()
		for try := 1; ; try++ {
			_, tid1 := reuseRun(t, r, first, nil)
			before := r.Reused()
			out, tid2 := reuseRun(t, r, attack, nil)
			if tid2 == tid1 && r.Reused() == before+1 {
				return out, tid2
			}
			if try == 10 {
				t.Fatalf("the next command never ran on the thread before (%d, %d)", tid1, tid2)
			}
			time.Sleep(time.Duration(try) * 20 * time.Millisecond)
		}
	}
	out, tid := followed("true")
	if !strings.HasPrefix(out, "notes") || strings.Contains(out, "SECRET") {
		t.Errorf("on a reused thread: %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(h, "work", "notes")); string(b) != "notes" {
		t.Errorf("a reused thread wrote: notes = %q", b)
	}
	// Left in the group: the next command on another thread. The rules
	// may move between two commands here too (the busy /tmp): again, as
	// followed does, until the command that leaves a process ran on the
	// thread before.
	for try := 1; ; try++ {
		_, tid1 := reuseRun(t, r, "sleep 1 &", nil)
		if tid1 == tid {
			break
		}
		if try == 10 {
			t.Fatalf("the thread of the command before was not used (%d, %d): the test proves nothing", tid, tid1)
		}
		time.Sleep(time.Duration(try) * 20 * time.Millisecond)
		_, tid = followed("true")
	}
	if _, tid2 := reuseRun(t, r, "true", nil); tid2 == tid {
		t.Error("a command left a process in its group, and its thread ran the next command")
	}
	// Do cannot tell: its thread ends.
	var doTid int
	if err := r.Do(func() { doTid = unix.Gettid(); exec.Command("true").Run() }); err != nil {
		t.Fatal(err)
	}
	if _, next := reuseRun(t, r, "true", nil); next == doTid {
		t.Error("Do's thread ran the next command")
	}
	// A new file is granted: the rules move, the thread confined before
	// (which lacks the grant) is not used.
	_, tid = followed("true")
	if err := os.WriteFile(filepath.Join(h, "new"), []byte("content new"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, next := reuseRun(t, r, "cat "+h+"/new", nil)
	if out != "content new" {
		t.Errorf("a file made since the thread was confined: %q", out)
	}
	if next == tid {
		t.Error("the rules moved, and the thread confined to the older ones ran the next command")
	}
}

// TestRestrictorReuseKeepsLevels: each level's Restrictor reuses its own
// threads: a safe (read-only) command after a medium one, each on a
// reused thread, still cannot write.
func TestRestrictorReuseKeepsLevels(t *testing.T) {
	needLandlock(t)
	h, safe := home(t, ReadOnly)
	medium := safe
	medium.Write, medium.Net = true, true
	rs, err := NewRestrictor(Compile(safe))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	rm, err := NewRestrictor(Compile(medium))
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Close()
	rs.Reuse()
	rm.Reuse()
	// The home is under a busy /tmp, whose new entries may move the rules
	// between two commands (and end the thread): more rounds then.
	for i := 0; i < 6 || i < 30 && (rs.Reused() == 0 || rm.Reused() == 0); i++ {
		m := filepath.Join(h, "work", "m"+strconv.Itoa(i))
		if out, _ := reuseRun(t, rm, "echo m > "+m+" && echo wrote", nil); out != "wrote\n" {
			t.Fatalf("medium could not write: %q", out)
		}
		sf := filepath.Join(h, "work", "s"+strconv.Itoa(i))
		reuseRun(t, rs, "echo s > "+sf+"; echo s > "+m, nil)
		if _, err := os.Stat(sf); err == nil {
			t.Fatalf("step %d: a safe command after a medium one made a file", i)
		}
		if b, _ := os.ReadFile(m); string(b) != "m\n" {
			t.Fatalf("step %d: a safe command after a medium one wrote: %q", i, b)
		}
	}
	if rs.Reused() == 0 || rm.Reused() == 0 {
		t.Errorf("reused: safe %d, medium %d: the test proves nothing", rs.Reused(), rm.Reused())
	}
}

// TestReuseLeftoverCannotSignal: a process a command left in its group
// cannot signal the thread of the next command (Landlock lets a domain
// signal its own: were the thread reused, it would share the leftover's
// domain and could be stopped or killed, and agent with it).
func TestReuseLeftoverCannotSignal(t *testing.T) {
	needLandlock(t)
	if ABI() < 6 {
		t.Skip("Landlock ABI < 6: no signal scope")
	}
	_, s := home(t, ReadOnly)
	dir := t.TempDir()
	s.Write, s.Net = true, true // medium's: the leftover writes its verdict
	r := restrictor(t, s)
	r.Reuse()
	tidFile, res := filepath.Join(dir, "tid"), filepath.Join(dir, "res")
	leftover := "(while [ ! -s " + tidFile + " ]; do sleep 0.01; done; if kill -0 $(cat " + tidFile + "); then echo reached; else echo denied; fi > " + res + ".tmp; mv " + res + ".tmp " + res + ") >/dev/null 2>&1 &"
	_, tid1 := reuseRun(t, r, leftover, nil)
	var verdict []byte
	_, tid2 := reuseRun(t, r, "true", func(tid int) {
		if err := os.WriteFile(tidFile, []byte(strconv.Itoa(tid)), 0o600); err != nil {
			t.Error(err)
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(res); err == nil {
				verdict = b
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	if string(verdict) != "denied\n" {
		t.Errorf("the leftover of the command before, signalling the next command's thread (%d, then %d): %q", tid1, tid2, verdict)
	}
}
