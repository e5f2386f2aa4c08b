package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRestrictorConfinesOnlyTheCommand: a command started inside Do runs
// confined (no write, no secret), while agent's own process, on any
// thread, goes on writing freely — also while confined commands run
// concurrently.
func TestRestrictorConfinesOnlyTheCommand(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	r := restrictor(t, s)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out []byte
			var rerr error
			if err := r.Do(func() {
				out, rerr = exec.Command("/bin/sh", "-c", "cat "+h+"/work/notes; echo x > "+h+"/work/notes; cat "+h+"/.ssh/id_rsa").CombinedOutput()
			}); err != nil {
				t.Error(err)
				return
			}
			if rerr == nil || !strings.HasPrefix(string(out), "notes") || strings.Contains(string(out), "SECRET") {
				t.Errorf("confined command: %v %q", rerr, out)
			}
		}()
		// agent itself is not confined
		if err := os.WriteFile(filepath.Join(h, "work", "agent-own"), []byte("x"), 0o600); err != nil {
			t.Fatalf("agent's own write was confined: %v", err)
		}
	}
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(h, "work", "notes")); string(b) != "notes" {
		t.Errorf("notes = %q", b)
	}
	if err := os.WriteFile(filepath.Join(h, ".bashrc"), []byte("agent"), 0o600); err != nil {
		t.Fatalf("agent's own write after Do: %v", err)
	}
	r.Close()
	if err := r.Do(func() {}); err == nil {
		t.Error("Do after Close ran")
	}
}

// TestRestrictorAhead: Ahead confines to the rules as last compiled,
// without checking them, and Current(gen) tells whether those still
// hold: not once a listed directory changed, nor once a Do compiled them
// again in between.
func TestRestrictorAhead(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	r := restrictor(t, s)
	nop := func() {}
	// settled is the generation of rules Current holds: the home is under
	// a busy /tmp, which the rules list, so another process's file there
	// may make them stale between two calls; ten times in a row is not
	// that.
	settled := func() int {
		t.Helper()
		for try := 1; ; try++ {
			gen, err := r.Ahead(nop)
			if ok, cerr := r.Current(gen); err == nil && cerr == nil && ok {
				return gen
			}
			if try == 10 {
				t.Fatalf("fresh rules: Current false ten times (%v)", err)
			}
			time.Sleep(time.Duration(try) * 20 * time.Millisecond)
		}
	}
	gen := settled()
	if err := os.WriteFile(filepath.Join(h, "new"), nil, 0o600); err != nil { // h is listed: .ssh is carved out of it
		t.Fatal(err)
	}
	stale, _ := r.Ahead(nop)
	if stale != gen {
		t.Errorf("Ahead compiled the stale rules (generation %d → %d)", gen, stale)
	}
	if ok, _ := r.Current(stale); ok {
		t.Error("a listed directory changed, but Current says the rules hold")
	}
	gen2 := settled()
	if gen2 == gen {
		t.Errorf("compiled again, but the generation is still %d", gen2)
	}
	// Renamed away (a file removed alone grants nothing and may keep
	// its rule: TestRestrictorPatchesInPlace).
	if err := os.Rename(filepath.Join(h, "new"), filepath.Join(t.TempDir(), "new")); err != nil {
		t.Fatal(err)
	}
	if err := r.Do(nop); err != nil { // builds the rules again
		t.Fatal(err)
	}
	if ok, _ := r.Current(gen2); ok {
		t.Error("Do built the rules again, but Current says generation", gen2, "holds")
	}
}

// TestRestrictorShieldsItsProcess: a command started confined from one of
// agent's threads cannot reach agent's process — its memory, its
// environment, its descriptors — through /proc, whichever thread (the
// one that forked it shares its Landlock domain) it aims at.
func TestRestrictorShieldsItsProcess(t *testing.T) {
	needLandlock(t)
	_, s := home(t, NoProtected)
	s.Caps = CapsNoSystem // a medium step's: root keeps no CAP_SYS_PTRACE
	r := restrictor(t, s)
	pid := strconv.Itoa(os.Getpid())
	for _, script := range []string{
		"exec 3<>/proc/" + pid + "/mem",
		"for m in /proc/" + pid + "/task/*/mem; do exec 3<>$m && exit 0; done; exit 1",
		"cat /proc/" + pid + "/environ",
		"for f in /proc/" + pid + "/fd/*; do : >> $f && exit 0; done; exit 1",
	} {
		var out []byte
		var rerr error
		if err := r.Do(func() { out, rerr = exec.Command("/bin/sh", "-c", script).CombinedOutput() }); err != nil {
			t.Fatal(err)
		}
		if rerr == nil {
			t.Errorf("%s: ran (%q)", script, out)
		}
	}
}

// restrictor is a Restrictor of s's rules, closed when t ends.
func restrictor(t *testing.T, s Spec) *Restrictor {
	t.Helper()
	r, err := NewRestrictor(Compile(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
