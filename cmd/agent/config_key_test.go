package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// keyTestEnv gives the test its own HOME and XDG directories and clears the
// variables that choose a model or hold a key.
func keyTestEnv(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	for _, v := range []string{"AGENT_PROVIDER", "AGENT_BASE_URL", "AGENT_MODEL", "AGENT_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "NO_COLOR"} {
		t.Setenv(v, "")
	}
	return filepath.Join(dir, "config", "agent", "config.yaml")
}

func runMain(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestStoredKeyNotSentElsewhere: a key saved for DeepSeek is not sent to a
// base URL given on the command line (an endpoint the key is not for);
// AGENT_API_KEY, meant for whatever endpoint is in effect, is.
func TestStoredKeyNotSentElsewhere(t *testing.T) {
	keyTestEnv(t)
	const key = "sk-stored-secret-0123456789"
	if code, _, stderr := runMain(t, key+"\n", "config", "set-llm", "--provider", "deepseek", "--key-stdin", "--no-test"); code != 0 {
		t.Fatalf("set-llm: exit %d: %s", code, stderr)
	}
	srv := testenv.StartLLMServer(t, testenv.Text("hello"), testenv.Text("hello again"))
	code, stdout, stderr := runMain(t, "", "--base-url", srv.URL, "--model", "qwen", "--mode", "react", "-c", "hi")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "" {
		t.Errorf("the stored key went to an endpoint given by --base-url: Authorization %q", got)
	}
	// config show tells the truth: no key is sent there, and why.
	_, show, _ := runMain(t, "", "--base-url", srv.URL, "--model", "qwen", "config", "show")
	if !strings.Contains(show, "(none)") || !strings.Contains(show, "none sent: the config file's key is for https://api.deepseek.com/v1") || strings.Contains(show, "stored-secret") {
		t.Errorf("config show:\n%s", show)
	}
	// AGENT_API_KEY is explicitly for the endpoint in effect.
	t.Setenv("AGENT_API_KEY", "sk-agent-key-0123456789")
	if code, _, stderr := runMain(t, "", "--base-url", srv.URL, "--model", "qwen", "--mode", "react", "-c", "hi"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "Bearer sk-agent-key-0123456789" {
		t.Errorf("AGENT_API_KEY not sent: Authorization %q", got)
	}
}

// TestSetLLMDropsOldKey: switching to a provider without a key drops the
// previous provider's api_key_env and api_key.
func TestSetLLMDropsOldKey(t *testing.T) {
	path := keyTestEnv(t)
	for _, args := range [][]string{
		{"config", "set-llm", "--provider", "deepseek", "--no-test"},
		{"config", "set-llm", "--provider", "ollama", "--no-test"},
	} {
		if code, _, stderr := runMain(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "api_key") || !strings.Contains(string(b), "provider: ollama") {
		t.Errorf("config after switching to ollama:\n%s", b)
	}
	if code, _, stderr := runMain(t, "sk-x-0123456789abcdef\n", "config", "set-llm", "--provider", "deepseek", "--key-stdin", "--no-test"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runMain(t, "", "config", "set-llm", "--provider", "ollama", "--no-test"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "api_key") || strings.Contains(string(b), "sk-x") {
		t.Errorf("stored key kept after switching to ollama:\n%s", b)
	}
}
