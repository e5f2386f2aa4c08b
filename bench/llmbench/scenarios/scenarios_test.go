package scenarios

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// Every scenario runs adaptive, ReAct with adaptive's tools and ReAct
// with every tool, on both transports, through the real loop: the scripts
// are accepted by the scripted server, the end state is right (Run checks
// it), all three run the same steps, the fair ReAct offers exactly the
// tools adaptive offered, and the scripted ReAct calls tools in parallel
// somewhere (fewer calls than steps + 1). Issue 31's economy targets are
// reported by llmbench, not asserted: the figures are what they are.
func TestScenarios(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	for _, open := range []func() (Host, func() error, error){
		LocalHost,
		func() (Host, func() error, error) { return SSHHost(ctx) },
	} {
		h, closeHost, err := open()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(h.Name, func(t *testing.T) {
			ps, err := RunAll(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != len(All()) {
				t.Fatalf("%d scenarios measured, want %d", len(ps), len(All()))
			}
			for _, p := range ps {
				for _, r := range []Measure{p.ReAct, p.ReActAll} {
					if !slices.Equal(p.Adaptive.Work, r.Work) || len(r.Work) < 3 {
						t.Errorf("%s: %s did other work than adaptive:\nadaptive %s\n%-8s %s", p.ReAct.Scenario, r.Variant,
							strings.Join(p.Adaptive.Work, "\n         "), r.Variant, strings.Join(r.Work, "\n         "))
					}
				}
				if a, r := slices.Sorted(slices.Values(p.Adaptive.Offered)), slices.Sorted(slices.Values(p.ReAct.Offered)); !slices.Equal(a, r) || len(r) == 0 {
					t.Errorf("%s: react offered %v, adaptive %v", p.ReAct.Scenario, p.ReAct.Offered, p.Adaptive.Offered)
				}
				if len(p.ReActAll.Offered) <= len(p.ReAct.Offered) {
					t.Errorf("%s: react-all offered %v", p.ReAct.Scenario, p.ReActAll.Offered)
				}
				if p.ReAct.Calls != p.ReActAll.Calls || p.ReAct.CompletionTokens == 0 || p.Adaptive.CompletionTokens == 0 {
					t.Errorf("%s: react %d calls, react-all %d; completion tokens %d, %d", p.ReAct.Scenario,
						p.ReAct.Calls, p.ReActAll.Calls, p.ReAct.CompletionTokens, p.Adaptive.CompletionTokens)
				}
			}
			tot := Totals(ps)
			if tot.ReAct.Calls >= tot.ReAct.Steps+len(ps) {
				t.Errorf("react made %d calls for %d steps in %d tasks: never two tools in one reply", tot.ReAct.Calls, tot.ReAct.Steps, len(ps))
			}
			if tot.ReAct.PromptTokens >= tot.ReActAll.PromptTokens {
				t.Errorf("react with adaptive's tools sent %d prompt tokens, with every tool %d", tot.ReAct.PromptTokens, tot.ReActAll.PromptTokens)
			}
			table, err := CostTable(ps, Prices)
			if err != nil || !strings.Contains(table, "total") {
				t.Errorf("cost table: %v\n%s", err, table)
			}
			t.Logf("\n%s\n%s", Table(ps), table)
		})
		if err := closeHost(); err != nil {
			t.Error(err)
		}
	}
}

// Each end-state check fails on the files as set up: the checks are real.
func TestChecksFailBeforeTheWork(t *testing.T) {
	dir := t.TempDir()
	for _, sc := range All() {
		if err := sc.Setup(dir); err != nil {
			t.Fatal(err)
		}
		if err := sc.Check(dir); err == nil {
			t.Errorf("%s: the check passes before any work", sc.Name)
		}
	}
}
