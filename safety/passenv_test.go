package safety

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestPassEnvLoad(t *testing.T) {
	p, _, err := LoadConfigPolicy(strings.NewReader("safety:\n  pass_env: [DEPLOY_ENV, http_proxy]\n"))
	if err != nil || !slices.Equal(p.PassEnv, []string{"DEPLOY_ENV", "http_proxy"}) {
		t.Fatalf("pass_env: %q %v", p.PassEnv, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"pass_env: [OPENAI_API_KEY]", "names a secret"},
		{"pass_env: [GITHUB_TOKEN]", "names a secret"},
		{"pass_env: [db_password]", "names a secret"},
		{"pass_env: [AGENT_MODEL]", "agent's own"},
		{"pass_env: [\"A=B\"]", "not a variable name"},
		{"pass_env: [\"1X\"]", "not a variable name"},
		{"pass_env: [\"\"]", "not a variable name"},
		{"pass_env: X", "cannot unmarshal"},
		{"pass_env: {a: b}", "cannot unmarshal"},
	} {
		_, err := LoadPolicy(strings.NewReader(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.yaml, err, tc.want)
		}
	}
	if err := checkPassEnv([]string{"AWS_SECRET_ACCESS_KEY"}); !errors.Is(err, ErrSecretEnv) {
		t.Errorf("a secret name: %v", err)
	}
}

func FuzzPassEnv(f *testing.F) {
	f.Add("pass_env: [DEPLOY_ENV]")
	f.Add("pass_env: [OPENAI_API_KEY]")
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := LoadPolicy(strings.NewReader(doc))
		if err != nil {
			return
		}
		if err := checkPassEnv(p.PassEnv); err != nil {
			t.Fatalf("%q loaded with a bad pass_env: %v", doc, err)
		}
	})
}
