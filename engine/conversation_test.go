package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/transport/local"
)

// TestSessionNotes: what the model is told about earlier REPL tasks (a
// Conversation's notes) stays bounded however long the session and
// whatever the variables hold.
func TestSessionNotes(t *testing.T) {
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r := &Conversation{Host: &Host{Name: "local", tr: tr, exec: executor.New(executor.Config{Transport: tr})}}
	if got := r.notes(); got != "" {
		t.Fatalf("no earlier task: %q", got)
	}
	for i := 1; i <= 12; i++ {
		r.earlier = append(r.earlier, earlierTask{task: fmt.Sprintf("task %d %s", i, strings.Repeat("x", 1000)),
			status: "success", answer: strings.Repeat("answer\n", 200)})
	}
	for i := range 30 {
		if err := r.Host.Vars().Set(fmt.Sprintf("v%02d", i), strings.Repeat("y", 5000)); err != nil {
			t.Fatal(err)
		}
	}
	got := r.notes()
	for _, want := range []string{"(7 older tasks not shown)", "8. task 8 x", "12. task 12 x", "- v00 = ", "… and 10 more"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(got, "7. task 7") || strings.Contains(got, "v20 =") || strings.Contains(got, "answer\n") {
		t.Errorf("more than the bounds allow")
	}
	limit := earlierTasks*(2*earlierTextBytes+40) + earlierVars*(earlierVarBytes+20) + 300
	if len(got) > limit {
		t.Errorf("notes are %d bytes, want ≤ %d", len(got), limit)
	}
}

func TestClipText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"a  b\nc", 10, "a b c"}, {"héllo wörld", 2, "h…"}, {"héllo", 3, "hé…"}, {"", 3, ""}} {
		if got := clipText(tc.in, tc.n); got != tc.want {
			t.Errorf("clipText(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
