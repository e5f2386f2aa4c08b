package transport

import (
	"slices"
	"testing"
)

func TestStepEnv(t *testing.T) {
	in := []string{"PATH=/bin", "OPENAI_API_KEY=sk-x", "HOME=/h", "AGENT_MCP_TOKEN=t", "LC_ALL=C", "LCX=no",
		"DEPLOY=prod", "noequals", "=x", "TERM=xterm", "PATHX=no", "XDG_RUNTIME_DIR=/run/user/1", "XDG_CONFIG_HOME=/c", "XDGX=no"}
	got := StepEnv(in, []string{"DEPLOY"})
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "DEPLOY=prod", "TERM=xterm", "XDG_RUNTIME_DIR=/run/user/1", "XDG_CONFIG_HOME=/c"}
	if !slices.Equal(got, want) {
		t.Errorf("StepEnv = %q, want %q", got, want)
	}
	if got := StepEnv(in, nil); slices.Contains(got, "DEPLOY=prod") {
		t.Errorf("not passed, DEPLOY reached the step: %q", got)
	}
}

func FuzzStepEnv(f *testing.F) {
	f.Add("PATH=/bin", "LC_*")
	f.Add("OPENAI_API_KEY=x", "")
	f.Fuzz(func(t *testing.T, kv, pass string) {
		for _, e := range StepEnv([]string{kv}, []string{pass}) {
			if e != kv {
				t.Fatalf("StepEnv made %q of %q", e, kv)
			}
		}
	})
}
