package executor

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/autoshell/agent/redact"
)

// envListing, run by a real sh in an environment a host's login would
// give (a token its ~/.bashrc exported), prints the secret-named
// variables only; the set learns them, and `env | rev` then hides them.
func TestEnvListing(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", envListing)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=HostEnvTok-5521ab", "LOG_LEVEL=verbose-info", "DB_PASS=HostDbPw-7781cd"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "verbose-info") || !strings.Contains(string(out), "GITHUB_TOKEN=") {
		t.Fatalf("listing %q", out)
	}
	set := redact.NewSet()
	set.HarvestListing(string(out))
	env, _ := exec.Command("/bin/sh", "-c", "printf 'GITHUB_TOKEN=HostEnvTok-5521ab\\nDB_PASS=HostDbPw-7781cd\\nLOG_LEVEL=verbose-info\\n' | rev").Output()
	got := set.String(string(env))
	for _, v := range []string{"HostEnvTok-5521ab", "HostDbPw-7781cd"} {
		if rv := reverseString(v); strings.Contains(got, rv) {
			t.Errorf("%s reversed not hidden: %q", v, got)
		}
	}
	if !strings.Contains(got, reverseString("verbose-info")) {
		t.Errorf("lost what is no secret: %q", got)
	}
}

func reverseString(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// The commands that print environment variables.
func TestPrintsEnvironment(t *testing.T) {
	for cmd, want := range map[string]bool{
		"env | base64":               true,
		"printenv | rev":             true,
		"declare -p | xxd -p":        true,
		"set | grep -a TOKEN":        true,
		`echo "$GITHUB_TOKEN" | rev`: true,
		`printf %s "${DB_PASSWORD}"`: true,
		`echo "$HOME/$USER"`:         false,
		"cat /etc/environment":       false,
		"grep -r envelope ~/mail":    false,
		"python3 -m venv .venv":      false,
	} {
		if got := printsEnvironment(cmd); got != want {
			t.Errorf("%s: %v, want %v", cmd, got, want)
		}
	}
}
