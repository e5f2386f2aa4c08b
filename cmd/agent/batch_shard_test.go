package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBatchShardReport: three controllers each run --shard K/3 of the
// same 22 hosts (real sshd) with --json; agent report merges their
// outputs: every host once, one summary, status 0. A part with no host is
// a finished empty part; an unfinished part makes the report fail.
func TestBatchShardReport(t *testing.T) {
	f := newBatchFixture(t)
	plan := f.writeFile("hello.yaml", "steps:\n  - tool: execute_command\n    parameters:\n      command: echo hello {{inventory_hostname}}\n")
	inv := f.inventory("")
	dir := t.TempDir()
	var files []string
	seen := map[string]bool{}
	for k := 1; k <= 3; k++ {
		out, errOut, code := f.agent("run", plan, "-i", inv, "--shard", itoa(k)+"/3", "--json")
		if code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", k, code, out, errOut)
		}
		p := mustPart(t, out, "shard")
		if n := len(p.hosts); n < 7 || n > 8 {
			t.Errorf("shard %d/3 of 22 hosts has %d", k, n)
		}
		for h := range p.hosts {
			if seen[h] {
				t.Errorf("%s in two shards", h)
			}
			seen[h] = true
		}
		file := filepath.Join(dir, "part"+itoa(k)+".jsonl")
		if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	// More parts than hosts: nothing to do, status 0, an empty batch.
	out, errOut, code := f.agent("run", plan, "-i", inv, "--limit", "web01", "--shard", "2/2", "--json")
	if code != 0 || !strings.Contains(errOut, "nothing to do") || !strings.HasPrefix(out, `{"event":"batch"`) {
		t.Fatalf("empty part: exit %d\n%s\n%s", code, out, errOut)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = f.agent(append([]string{"report"}, append(files, empty)...)...)
	if code != 0 || !strings.Contains(out, "22 hosts: 22 ok, 0 failed, 0 not run (from 4 files)") {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errOut)
	}
	// A part cut short (its controller died) is not a finished run.
	b, _ := os.ReadFile(files[2])
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = f.agent("report", files[0], files[1], cut)
	if code != 1 || !strings.Contains(errOut, "cut.jsonl") || !strings.Contains(out, "1 of them unfinished") {
		t.Fatalf("cut part: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code = f.agent("run", plan, "-i", inv, "--shard", "0/3"); code != 2 || !strings.Contains(errOut, "numbered from 1") {
		t.Fatalf("--shard 0/3: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = f.agent("report", filepath.Join(dir, "missing.jsonl")); code != 2 {
		t.Fatalf("missing file: exit %d\n%s", code, errOut)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
