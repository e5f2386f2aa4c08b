package stepgen

import (
	"slices"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// A call to a registered tool that was not offered, written as plain JSON
// text (no tags, no fence), is run as a call — not taken as the phase's
// closing text.
func TestAdaptiveUnofferedToolAsText(t *testing.T) {
	f := newFixture(t)
	f.srv.Push(
		testenv.Calls(testenv.Call("submit_plan", `{"phases":[{"phase":1,"goal":"look around"}]}`)),
		testenv.Text(`{"name":"ps","arguments":{}}`),
		testenv.Text("Looked at the processes."))
	res, err := f.run(ModeAdaptive, 0, "look around", 0)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Steps != 1 || len(res.Ran) != 1 || res.Ran[0].Step.Tool != "ps" {
		t.Fatalf("steps %+v", res.Ran)
	}
	if res.Answer != "Looked at the processes." {
		t.Errorf("answer %q", res.Answer)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if names := reqs[1].Request.ToolNames(); strings.Contains(strings.Join(names, ","), "ps") {
		t.Fatalf("ps was offered in the first step request: %v", names)
	}
	if got, want := stepTools(t, reqs[2]), append(slices.Sorted(slices.Values(CoreTools)), "ps"); !slices.Equal(got, want) {
		t.Errorf("after ps, %v offered, want %v", got, want)
	}
}

func TestFailedReason(t *testing.T) {
	for text, want := range map[string]string{
		"FAILED: disk full":         "disk full",
		"  failed:  no such file\n": "no such file",
		"**FAILED:** nope":          "nope",
		"FAILED:":                   "no reason given",
		"# FAILED: x":               "x",
	} {
		if got, ok := failedReason(text); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", text, got, ok, want)
		}
	}
	for _, text := range []string{"", "It failed.", "FAILED", "The step FAILED: retry", "FAIL: x", "REPLAN: x", "失败"} {
		if got, ok := failedReason(text); ok {
			t.Errorf("%q taken as failure (%q)", text, got)
		}
	}
}

func FuzzFailedReason(f *testing.F) {
	f.Add("FAILED: x")
	f.Add("**failed:**")
	f.Fuzz(func(t *testing.T, text string) {
		if reason, ok := failedReason(text); ok && reason == "" {
			t.Fatalf("%q: empty reason", text)
		}
	})
}
