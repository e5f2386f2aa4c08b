package scenarios

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// The three scenarios run in both modes on both transports through the
// real loop: the scripts are accepted by the scripted server, the end
// state is right (Run checks it), both modes run the same steps, and in
// total adaptive makes at most 0.7× ReAct's calls and sends at most 40% of
// its o200k prompt tokens (60% by bytes / 4): calls and token counts are
// deterministic; only timing is left to the benchmarks.
func TestScenarios(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
			for _, p := range ps {
				if !slices.Equal(p.Adaptive.Work, p.ReAct.Work) || len(p.ReAct.Work) < 3 {
					t.Errorf("%s: the modes did different work:\nadaptive %s\nreact    %s", p.ReAct.Scenario,
						strings.Join(p.Adaptive.Work, "\n         "), strings.Join(p.ReAct.Work, "\n         "))
				}
				if p.ReAct.Calls != len(p.ReAct.Work)+1 {
					t.Errorf("%s: react made %d calls for %d steps; it should take one step a turn", p.ReAct.Scenario, p.ReAct.Calls, len(p.ReAct.Work))
				}
				if p.Adaptive.ToolBytes >= p.ReAct.ToolBytes || p.Adaptive.PromptTokens == 0 {
					t.Errorf("%s: adaptive sent %d bytes of tool definitions, react %d", p.ReAct.Scenario, p.Adaptive.ToolBytes, p.ReAct.ToolBytes)
				}
			}
			tot := Totals(ps)
			if r := tot.Ratio(); r > 0.60 {
				t.Errorf("adaptive sends %.1f%% of ReAct's prompt tokens (bytes/4), target ≤ 60%%\n%s", 100*r, Table(ps))
			}
			if r := tot.O200kRatio(); r > 0.40 || tot.Adaptive.O200k == 0 {
				t.Errorf("adaptive sends %.1f%% of ReAct's o200k prompt tokens, target ≤ 40%%\n%s", 100*r, Table(ps))
			}
			if r := tot.CallRatio(); r > 0.70 {
				t.Errorf("adaptive makes %.2f× ReAct's calls, target ≤ 0.7×\n%s", r, Table(ps))
			}
			t.Logf("\n%s", Table(ps))
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
