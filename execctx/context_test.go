package execctx

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"x", "script_output", "_tmp", "a1", "condition_result", "Last", "count", "map"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q): %v", ok, err)
		}
	}
	tests := []struct{ name, sub string }{
		{"", "empty"},
		{"1abc", "letter or underscore"},
		{"a-b", "letter or underscore"},
		{"a.b", "letter or underscore"},
		{"日本", "letter or underscore"},
		{"last", "latest step's result"},
		{"True", "Python keyword"},
		{"False", "Python keyword"},
		{"None", "Python keyword"},
		{"and", "Python keyword"},
		{"is", "Python keyword"},
		{"true", "condition keyword"},
		{"len", "condition function"},
		{"str", "condition function"},
		{"end", "Go templates"},
		{"__x", "__"},
		{strings.Repeat("a", MaxNameLength+1), "longer than"},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), tt.sub) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidName containing %q", tt.name, err, tt.sub)
		}
	}
}

func TestSetGet(t *testing.T) {
	c := New()
	src := map[string]any{"k": []string{"a"}, "n": int64(5), "u": uint8(2), "f": float32(0.5)}
	if err := c.Set("cfg", src); err != nil {
		t.Fatal(err)
	}
	src["k"] = nil
	got, ok := c.Get("cfg")
	want := map[string]any{"k": []any{"a"}, "n": 5, "u": 2, "f": 0.5}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("Get = %#v, want %#v", got, want)
	}
	got.(map[string]any)["n"] = 99
	if again, _ := c.Get("cfg"); again.(map[string]any)["n"] != 5 {
		t.Error("Get returned shared state")
	}
	if err := c.Set("last", "x"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Set(last) = %v", err)
	}
	if err := c.Set("ch", make(chan int)); err == nil || !strings.Contains(err.Error(), "unsupported value type") {
		t.Errorf("Set(chan) = %v", err)
	}
	if _, ok := c.Get("missing"); ok {
		t.Error("Get(missing) ok")
	}
	if ok, err := c.Eval("cfg.n == 5 and cfg.k == ['a']"); !ok || err != nil {
		t.Errorf("Eval = %v, %v", ok, err)
	}
}

func TestRecord(t *testing.T) {
	c := New()
	if _, err := c.Eval("last.success"); !errors.Is(err, ErrUnknownVariable) {
		t.Errorf("last before any step: %v", err)
	}
	steps := []StepRecord{
		{Tool: "execute_command", Params: map[string]any{"command": "bash ~/test/a.sh"}, Status: StatusOK, Stdout: "1\n", SaveAs: "script_output", Duration: 12 * time.Millisecond},
		{Tool: "check_condition", Params: map[string]any{"condition": "script_output.strip() == '1'"}, Status: StatusOK, Stdout: "true", Value: true, SaveAs: "condition_result"},
		{Tool: "read_file", Status: StatusOK, Stdout: "echo 1\n", SaveAs: "script_content", Files: []FileAccess{{FileRead, "~/test/a.sh"}}},
		{Tool: "edit_file", Status: StatusOK, Files: []FileAccess{{FileEdited, "~/test/a.sh"}, {FileRead, "~/test/a.sh"}}},
	}
	for _, s := range steps {
		if err := c.Record(s); err != nil {
			t.Fatal(err)
		}
	}
	for cond, want := range map[string]bool{
		"script_output.strip() == '1'":                               true,
		"condition_result == True":                                   true,
		"script_content == 'echo 1\\n'":                              true,
		"last.success and last.exit_code == 0 and last.stdout == ''": true,
	} {
		if got, err := c.Eval(cond); err != nil || got != want {
			t.Errorf("Eval(%q) = %v, %v", cond, got, err)
		}
	}
	wantFiles := []FileAccess{{FileRead, "~/test/a.sh"}, {FileEdited, "~/test/a.sh"}}
	if got := c.FilesAccessed(); !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("FilesAccessed = %v, want %v", got, wantFiles)
	}

	// A command that failed still saves its output; a skipped or denied
	// step does not, and sets last.success to false.
	if err := c.Record(StepRecord{Tool: "execute_command", Status: StatusError, ExitCode: 2, Stdout: "partial", Stderr: "boom", SaveAs: "r"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Eval("r == 'partial' and last.exit_code == 2 and last.stderr == 'boom' and not last.success"); !ok || err != nil {
		t.Errorf("after error: %v, %v", ok, err)
	}
	if err := c.Record(StepRecord{Tool: "read_file", Status: StatusSkipped, SaveAs: "r2"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("r2"); ok {
		t.Error("skipped step stored its variable")
	}
	if ok, _ := c.Eval("last.success"); ok {
		t.Error("last.success after a skipped step")
	}
	if err := c.Record(StepRecord{Tool: "x", Status: StatusOK, SaveAs: "True"}); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Record with SaveAs True = %v", err)
	}
	if c.Len() != 7 || len(c.History()) != 7 {
		t.Errorf("Len = %d", c.Len())
	}
	h := c.History()
	h[0].Params["command"] = "changed"
	if c.History()[0].Params["command"] != "bash ~/test/a.sh" {
		t.Error("History returned shared params")
	}
}

func TestRecordClipsHistoryNotVariables(t *testing.T) {
	c := New()
	c.MaxRecordOutput = 100
	big := strings.Repeat("x", 10_000)
	if err := c.Record(StepRecord{Tool: "t", Status: StatusOK, Stdout: big, Output: big, SaveAs: "big"}); err != nil {
		t.Fatal(err)
	}
	if h := c.History()[0]; len(h.Stdout) > 100 || len(h.Output) > 100 || !strings.Contains(h.Output, "bytes omitted") {
		t.Errorf("record not clipped: %d %q", len(h.Stdout), h.Output)
	}
	if v, _ := c.Get("big"); v != big {
		t.Error("variable clipped")
	}
	if ok, err := c.Eval("len(last.stdout) == 10000"); !ok || err != nil {
		t.Errorf("last clipped: %v %v", ok, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				name := fmt.Sprintf("v%d_%d", g, i)
				_ = c.Record(StepRecord{Tool: "t", Status: StatusOK, Stdout: name, SaveAs: name, Files: []FileAccess{{FileRead, name}}})
				if _, err := c.Render("{{ " + name + " }}"); err != nil {
					t.Error(err)
				}
				if _, err := c.Eval("len(last.stdout) > 0"); err != nil {
					t.Error(err)
				}
				_ = c.Summary(2000)
				_ = c.Vars()
			}
		}()
	}
	wg.Wait()
	if c.Len() != 800 || len(c.FilesAccessed()) != 800 {
		t.Errorf("Len = %d, files = %d", c.Len(), len(c.FilesAccessed()))
	}
}
