package planner

import (
	"path/filepath"
	"testing"
)

// TestExamples parses and validates every plan in examples/.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("examples: %q, want at least the three spec scenarios", files)
	}
	for _, f := range files {
		p, err := ParseFile(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if err := Validate(p, coreTools(), nil); err != nil {
			t.Errorf("%v", err)
		}
		if p.Name == "" || len(p.Steps()) < 3 {
			t.Errorf("%s: name %q, %d steps", f, p.Name, len(p.Steps()))
		}
	}
}
