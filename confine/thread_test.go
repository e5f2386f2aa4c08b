package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestRestrictorConfinesOnlyTheCommand: a command started inside Do runs
// confined (no write, no secret), while agent's own process, on any
// thread, goes on writing freely — also while confined commands run
// concurrently.
func TestRestrictorConfinesOnlyTheCommand(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	r, err := NewRestrictor(Compile(s))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
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
