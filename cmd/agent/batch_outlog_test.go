package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchOutLogKeepsAllOutput: --out DIR/HOST.log holds every line a
// command printed (the step's observation keeps only its head and tail),
// written as it came, then the step's status; the terminal's truncation
// note points at where all of it is.
func TestBatchOutLogKeepsAllOutput(t *testing.T) {
	f := newBatchFixture(t)
	plan := f.writeFile("big.yaml", "steps:\n  - tool: execute_command\n    parameters:\n      command: seq 1 100000\n")
	inv := f.inventory("")
	outDir := filepath.Join(t.TempDir(), "out")
	out, errOut, code := f.agent("run", plan, "-i", inv, "--limit", "web01", "--out", outDir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(outDir, "web01.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if n := strings.Count(log, "      │ "); n != 100000 {
		t.Errorf("log holds %d output lines, want 100000", n)
	}
	for _, want := range []string{"│ 1\n", "│ 50000\n", "│ 100000\n      ok (exit 0"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if strings.Contains(log, "output truncated") {
		t.Errorf("the log repeats the truncated observation")
	}
}
