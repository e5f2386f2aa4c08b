package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSession(t *testing.T, state, id string) *Log {
	t.Helper()
	l, err := Create(state, id, Start{Kind: KindRun, Target: "h", Plan: "p.yaml", Args: []string{"run", "p.yaml"}, Dir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(Record{R: RecStepStart, Host: "h", Step: 1, Tool: "execute_command", Command: "echo 1"}, true)
	l.Write(Record{R: RecStep, Host: "h", Step: 1, Status: "ok", Vars: map[string]any{"a": "x"}}, true)
	l.Write(Record{R: RecLLM, Host: "h", Model: "m", PromptTokens: 10, CompletionTokens: 5}, false)
	l.Write(Record{R: RecStepStart, Host: "h", Step: 2, Tool: "execute_command", Command: "sleep 9"}, true)
	return l
}

// TestRecordAndBuild: a session killed mid step is interrupted, with step
// 2's outcome unknown; its usage counted.
func TestRecordAndBuild(t *testing.T) {
	state := t.TempDir()
	l := writeSession(t, state, "s1")
	if s, err := Load(state, "s1"); err != nil || s.Info.State != StateRunning {
		t.Fatalf("while recording: %+v %v", s, err)
	}
	l.Close() // killed: no end record
	s, err := Load(state, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Info.State != StateInterrupted || s.Info.LLMCalls != 1 || s.Info.Tokens() != 15 || s.Info.Hosts.Pending != 1 {
		t.Errorf("info %+v", s.Info)
	}
	h := s.Hosts["h"]
	if u := h.Unknown(); u == nil || u.Step != 2 || u.Command != "sleep 9" {
		t.Errorf("unknown %+v", u)
	}
	if _, err := Create(state, "s1", Start{}); err == nil {
		t.Error("Create over an existing session")
	}
	// Resumed and finished.
	l, err = Append(state, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Append(state, "s1"); !errors.Is(err, ErrLocked) {
		t.Errorf("second Append: %v, want ErrLocked", err)
	}
	l.Write(Record{R: RecResume}, true)
	l.Write(Record{R: RecStepStart, Host: "h", Step: 2}, true)
	l.Write(Record{R: RecStep, Host: "h", Step: 2, Status: "ok"}, true)
	l.Write(Record{R: RecDone, Host: "h", Status: "success"}, true)
	l.End(StateDone)
	list, err := List(state)
	if err != nil || len(list) != 1 {
		t.Fatalf("List %+v %v", list, err)
	}
	if i := list[0]; i.State != StateDone || i.Resumed != 1 || i.Hosts.Done != 1 || i.Unfinished() {
		t.Errorf("after resume: %+v", i)
	}
}

// TestTornLastLine: a last line cut short is ignored when read, and cut
// off before the next record is appended.
func TestTornLastLine(t *testing.T) {
	state := t.TempDir()
	writeSession(t, state, "s2").Close()
	p := Path(state, "s2")
	b, _ := os.ReadFile(p)
	full := strings.Count(string(b), "\n")
	for cut := len(b) - 2; cut > len(b)-40; cut-- { // (without only its newline the line is whole)
		os.WriteFile(p, b[:cut], 0o600)
		recs, err := ReadFile(p)
		if err != nil || len(recs) != full-1 {
			t.Fatalf("cut at %d: %d records, %v", cut, len(recs), err)
		}
	}
	l, err := Append(state, "s2")
	if err != nil {
		t.Fatal(err)
	}
	l.End(StateFailed)
	recs, err := ReadFile(p)
	if err != nil || len(recs) != full || recs[len(recs)-1].R != RecEnd {
		t.Fatalf("after append: %d records (want %d), %v", len(recs), full, err)
	}
}

// TestDamaged: a bad line with records after it is a clear error naming
// the line, never a guess; garbage is not a session.
func TestDamaged(t *testing.T) {
	state := t.TempDir()
	writeSession(t, state, "s3").Close()
	p := Path(state, "s3")
	b, _ := os.ReadFile(p)
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = "{\"r\":\"step\",\"step\":1,\"sta\x00\n"
	os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600)
	_, err := Load(state, "s3")
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("damaged: %v", err)
	}
	list, _ := List(state)
	if len(list) != 1 || list[0].Error == "" {
		t.Errorf("List: %+v", list)
	}
	for _, bad := range []string{"", "\n", "not json\n", `{"r":"step","step":1}` + "\n", `{"r":"start"}` + "\n"} {
		os.WriteFile(p, []byte(bad), 0o600)
		if _, err := Load(state, "s3"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := Load(state, "../x"); err == nil {
		t.Error("bad id accepted")
	}
	if _, err := Load(state, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(state, "sessions", "old"), 0o700); err != nil {
		t.Fatal(err)
	}
}
