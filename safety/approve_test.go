package safety

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{ModeNever, ModeAsk, ModeMedium, ModeAll} {
		got, err := ParseMode(" " + strings.ToUpper(m.String()) + " ")
		if err != nil || got != m {
			t.Errorf("ParseMode(%s) = %v, %v", m, got, err)
		}
	}
	if _, err := ParseMode("yes"); err == nil {
		t.Error("ParseMode(yes) succeeded")
	}
	var m Mode
	if m != ModeNever {
		t.Error("zero Mode is not ModeNever")
	}
	if err := m.Set("medium"); err != nil || m != ModeMedium || m.Type() != "mode" {
		t.Errorf("Set = %v, %v", m, err)
	}
	if DefaultMode(true) != ModeAsk || DefaultMode(false) != ModeNever {
		t.Error("DefaultMode")
	}
}

// answer is a scripted prompter answer.
type answer int

const (
	noAsk answer = iota // the prompter must not be called
	yes
	no
	always
	fails
)

func scripted(t *testing.T, a answer, calls *int) Prompter {
	return PrompterFunc(func(ctx context.Context, req Request) (Decision, error) {
		*calls++
		switch a {
		case yes:
			return Decision{Allowed: true}, nil
		case no:
			return Decision{}, nil
		case always:
			return Decision{Allowed: true, Always: true}, nil
		case fails:
			return Decision{}, io.ErrUnexpectedEOF
		}
		t.Errorf("prompter called for %s", req.Risk.Level)
		return Decision{}, nil
	})
}

func TestDecide(t *testing.T) {
	safe := Assessment{Level: Safe}
	medium := Assessment{Level: Medium, Reasons: []string{"write ~/a: writes a file"}}
	high := Assessment{Level: High, Reasons: []string{"sudo: runs as root"}}
	tests := []struct {
		mode     Mode
		risk     Assessment
		answer   answer
		noPrompt bool // no prompter at all (no terminal)
		allowed  bool
		asked    bool
		by       string
		reason   string
	}{
		{ModeNever, safe, noAsk, false, true, false, ByPolicy, "safe"},
		{ModeNever, medium, noAsk, false, false, false, ByPolicy, "medium risk: write ~/a: writes a file — needs approval; run with --approve medium"},
		{ModeNever, high, noAsk, false, false, false, ByPolicy, "high risk: sudo: runs as root — needs approval; run with --approve all or answer y"},
		{ModeAsk, safe, noAsk, false, true, false, ByPolicy, "safe"},
		{ModeAsk, medium, yes, false, true, true, ByUser, "approved by user"},
		{ModeAsk, medium, no, false, false, true, ByUser, "denied by user"},
		{ModeAsk, high, yes, false, true, true, ByUser, "approved by user"},
		{ModeAsk, high, no, false, false, true, ByUser, "denied by user"},
		{ModeAsk, high, fails, false, false, false, ByPolicy, "approval failed: unexpected EOF; high risk: sudo"},
		{ModeAsk, medium, noAsk, true, false, false, ByPolicy, "needs approval"},
		{ModeAsk, high, noAsk, true, false, false, ByPolicy, "needs approval"},
		{ModeMedium, medium, noAsk, false, true, false, ByPolicy, "medium risk allowed by --approve medium"},
		{ModeMedium, high, yes, false, true, true, ByUser, "approved by user"},
		{ModeMedium, high, no, false, false, true, ByUser, "denied by user"},
		{ModeMedium, high, noAsk, true, false, false, ByPolicy, "run with --approve all"},
		{ModeAll, medium, noAsk, false, true, false, ByPolicy, "allowed by --approve all"},
		{ModeAll, high, noAsk, false, true, false, ByPolicy, "high risk allowed by --approve all"},
		{ModeAll, high, noAsk, true, true, false, ByPolicy, "allowed"},
	}
	for _, tc := range tests {
		name := tc.mode.String() + "/" + tc.risk.Level.String()
		t.Run(name, func(t *testing.T) {
			calls := 0
			var p Prompter
			if !tc.noPrompt {
				p = scripted(t, tc.answer, &calls)
			}
			d, err := NewApprover(tc.mode, p).Decide(context.Background(), Request{Tool: "execute_command", Command: "x", Risk: tc.risk})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != tc.allowed || d.Asked != tc.asked || d.By != tc.by || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("got %+v, want allowed=%v asked=%v by=%s reason~%q", d, tc.allowed, tc.asked, tc.by, tc.reason)
			}
			if d.Allowed != (d.Outcome() == "allowed") {
				t.Errorf("Outcome = %s", d.Outcome())
			}
		})
	}
}

func TestDecideAlwaysRemembered(t *testing.T) {
	calls := 0
	a := NewApprover(ModeAsk, scripted(t, always, &calls))
	req := Request{Host: "web01", Tool: "execute_command", Params: map[string]any{"command": "systemctl restart nginx"}, Risk: Assessment{Level: Medium}}
	ctx := context.Background()
	d, _ := a.Decide(ctx, req)
	if !d.Allowed || !d.Always || !d.Asked || calls != 1 {
		t.Fatalf("first: %+v calls=%d", d, calls)
	}
	req.Host = "web02" // same resolved step on another host: not asked again
	d, _ = a.Decide(ctx, req)
	if !d.Allowed || d.Asked || !d.Always || d.By != ByUser || calls != 1 {
		t.Fatalf("second: %+v calls=%d", d, calls)
	}
	req.Params = map[string]any{"command": "systemctl restart mysql"} // a different step is asked
	if d, _ = a.Decide(ctx, req); !d.Asked || calls != 2 {
		t.Fatalf("different step: %+v calls=%d", d, calls)
	}
	// A plain yes is not remembered.
	calls = 0
	b := NewApprover(ModeAsk, scripted(t, yes, &calls))
	b.Decide(ctx, req)
	b.Decide(ctx, req)
	if calls != 2 {
		t.Errorf("yes remembered: calls=%d", calls)
	}
}

func TestDecideAlwaysConcurrent(t *testing.T) {
	var calls atomic.Int32
	a := NewApprover(ModeAsk, PrompterFunc(func(ctx context.Context, req Request) (Decision, error) {
		calls.Add(1)
		time.Sleep(5 * time.Millisecond)
		return Decision{Allowed: true, Always: true}, nil
	}))
	req := Request{Tool: "write_file", Params: map[string]any{"file_path": "/tmp/x", "content": "1"}, Risk: Assessment{Level: Medium}}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if d, err := a.Decide(context.Background(), req); err != nil || !d.Allowed {
				t.Errorf("%+v %v", d, err)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("asked %d times, want once", calls.Load())
	}
}

func TestDecideCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := NewApprover(ModeAsk, &LinePrompter{In: blockingReader{}, Out: io.Discard})
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	d, err := a.Decide(ctx, Request{Tool: "execute_command", Command: "rm -rf /tmp/x", Risk: Assessment{Level: High}})
	if !errors.Is(err, context.Canceled) || d.Allowed {
		t.Fatalf("got %+v, %v", d, err)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("cancel was not prompt")
	}
	// Safe steps need nobody, even with ctx done.
	if d, err := a.Decide(ctx, Request{Risk: Assessment{Level: Safe}}); err != nil || !d.Allowed {
		t.Errorf("safe after cancel: %+v %v", d, err)
	}
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func TestLinePrompter(t *testing.T) {
	req := Request{
		Host: "vub", Tool: "edit_file", Path: "/home/u/a.sh", Risk: Assessment{Level: Medium, Reasons: []string{"edit /home/u/a.sh: writes a file"}},
		Diff: "--- a/a.sh\n+++ b/a.sh\n-echo 1\n+echo 2\x1b[2K",
	}
	tests := []struct {
		in              string
		allowed, always bool
		err             bool
	}{
		{"y\n", true, false, false},
		{"YES\n", true, false, false},
		{" a \n", true, true, false},
		{"always\n", true, true, false},
		{"\n", false, false, false},
		{"n\n", false, false, false},
		{"sure\n", false, false, false},
		{"y", true, false, false}, // last line without newline
		{"", false, false, true},  // input closed
	}
	for _, tc := range tests {
		var out bytes.Buffer
		p := &LinePrompter{In: strings.NewReader(tc.in), Out: &out}
		d, err := p.Approve(context.Background(), req)
		if (err != nil) != tc.err || d.Allowed != tc.allowed || d.Always != tc.always {
			t.Errorf("%q: %+v, %v", tc.in, d, err)
		}
		o := out.String()
		for _, want := range []string{"MEDIUM risk: edit_file on vub", "file: /home/u/a.sh", "- edit /home/u/a.sh: writes a file", "+echo 2\\x1b[2K\n", "[y/N/a=always]"} {
			if !strings.Contains(o, want) {
				t.Errorf("%q: output lacks %q:\n%s", tc.in, want, o)
			}
		}
	}
}

func TestLinePrompterSequence(t *testing.T) {
	var out bytes.Buffer
	p := &LinePrompter{In: strings.NewReader("n\ny\n"), Out: &out}
	req := Request{Tool: "execute_command", Command: "echo hi\r\u202e", Risk: Assessment{Level: High}}
	d1, _ := p.Approve(context.Background(), req)
	d2, _ := p.Approve(context.Background(), req)
	if d1.Allowed || !d2.Allowed {
		t.Errorf("answers %+v %+v", d1, d2)
	}
	if !strings.Contains(out.String(), `command: echo hi\x0d\u202e`) {
		t.Errorf("control characters not escaped:\n%s", out.String())
	}
	if _, err := p.Approve(context.Background(), req); err == nil {
		t.Error("no error after input ended")
	}
}

func TestStepKey(t *testing.T) {
	k1, ok1 := StepKey(Request{Tool: "t", Params: map[string]any{"a": 1, "b": "x"}})
	k2, ok2 := StepKey(Request{Tool: "t", Params: map[string]any{"b": "x", "a": 1}, Host: "other"})
	if !ok1 || !ok2 || k1 != k2 {
		t.Errorf("keys differ: %s %s", k1, k2)
	}
	if _, ok := StepKey(Request{Params: map[string]any{"f": func() {}}}); ok {
		t.Error("unencodable params keyed")
	}
	// The same edit_file parameters changing the file otherwise are
	// another step.
	edit := Request{Tool: "edit_file", Params: map[string]any{"file_path": "/srv/app.conf", "search_pattern": "^listen .*$",
		"replacement": "listen 8080", "regex": true}, Path: "/srv/app.conf", Diff: "-listen 80\n+listen 8080\n"}
	other := edit
	other.Diff = "-listen 80\n+listen 8080\n-listen 443 ssl\n+listen 8080\n"
	ke, _ := StepKey(edit)
	ko, _ := StepKey(other)
	if ke == ko {
		t.Errorf("different diffs, one key: %s", ke)
	}
	if same, _ := StepKey(edit); same != ke {
		t.Errorf("one diff, two keys: %s %s", same, ke)
	}
}

// TestApproverAlwaysNotForAnotherDiff: an "always" answer for an edit does
// not approve the same parameters making another change.
func TestApproverAlwaysNotForAnotherDiff(t *testing.T) {
	asked := 0
	a := NewApprover(ModeAsk, PrompterFunc(func(ctx context.Context, r Request) (Decision, error) {
		asked++
		return Decision{Allowed: true, Always: true}, nil
	}))
	req := Request{Tool: "edit_file", Params: map[string]any{"file_path": "/srv/a"}, Path: "/srv/a",
		Risk: Assessment{Level: Medium}, Diff: "-a\n+b\n"}
	for _, diff := range []string{"-a\n+b\n", "-a\n+b\n", "-x\n+b\n"} {
		req.Diff = diff
		if d, err := a.Decide(context.Background(), req); err != nil || !d.Allowed {
			t.Fatalf("%v %v", d, err)
		}
	}
	if asked != 2 {
		t.Errorf("asked %d times, want 2 (once per diff)", asked)
	}
}

// TestApproverScopeTask: with ScopeTask an "always" answer holds until
// NewTask; with ScopeSession NewTask forgets nothing.
func TestApproverScopeTask(t *testing.T) {
	req := Request{Tool: "write_file", Params: map[string]any{"file_path": "/srv/x"}, Path: "/srv/x", Risk: Assessment{Level: Medium}}
	for _, tc := range []struct {
		scope     Scope
		askedThen int // questions after NewTask and the same step again
	}{{ScopeTask, 2}, {ScopeSession, 1}} {
		asked := 0
		p := PrompterFunc(func(context.Context, Request) (Decision, error) {
			asked++
			return Decision{Allowed: true, Always: true}, nil
		})
		a := NewApprover(ModeAsk, p, WithScope(tc.scope))
		for range 2 {
			if d, err := a.Decide(context.Background(), req); err != nil || !d.Allowed {
				t.Fatalf("%v: %+v %v", tc.scope, d, err)
			}
		}
		if asked != 1 {
			t.Errorf("scope %v: asked %d times in one task, want 1", tc.scope, asked)
		}
		a.NewTask()
		d, _ := a.Decide(context.Background(), req)
		if asked != tc.askedThen || !d.Allowed {
			t.Errorf("scope %v: asked %d times after NewTask, want %d (%+v)", tc.scope, asked, tc.askedThen, d)
		}
	}
}
