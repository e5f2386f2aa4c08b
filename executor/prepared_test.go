package executor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport/local"
)

// A prepared step knows what it reads and writes on its host, where its
// links lead: a command's files from the classifier, a file tool's own.
func TestPreparedTouched(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	must(t, os.WriteFile(filepath.Join(home, "real.txt"), []byte("x\n"), 0o644))
	must(t, os.Symlink(filepath.Join(home, "real.txt"), filepath.Join(home, "link")))
	tr, err := local.New()
	must(t, err)
	e := New(Config{Transport: tr, Policy: safety.DefaultPolicy()})
	ctx := context.Background()
	for _, tc := range []struct {
		tool          string
		params        map[string]any
		reads, writes []string
	}{
		{"execute_command", map[string]any{"command": "cat ~/link > ~/out.txt"},
			[]string{home + "/real.txt"}, []string{home + "/out.txt"}},
		{"read_file", map[string]any{"file_path": "~/link"}, []string{home + "/real.txt"}, nil},
		{"edit_file", map[string]any{"file_path": "~/link", "search_pattern": "x", "replacement": "y"},
			[]string{home + "/real.txt"}, []string{home + "/real.txt"}},
	} {
		p, d := e.prepare(ctx, planner.Step{Tool: tc.tool, Parameters: tc.params})
		if d != nil {
			t.Fatalf("%s: %+v", tc.tool, d)
		}
		if p.cls, err = e.classify(ctx, p); err != nil {
			t.Fatal(err)
		}
		reads, writes := p.touched()
		if !slices.Equal(reads, tc.reads) || !slices.Equal(writes, tc.writes) {
			t.Errorf("%s %v: reads %q writes %q, want %q %q", tc.tool, tc.params, reads, writes, tc.reads, tc.writes)
		}
	}
}
