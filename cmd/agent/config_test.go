package main

import (
	"bytes"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/llm"
)

var llmSet = [][2]string{{"provider", "generic"}, {"base_url", "http://h:1/v1"}, {"model", "m"}, {"api_key_env", "K"}}

// TestUpdateLLMSection: the llm: keys are set, the dropped key goes, and
// other sections, keys and comments stay.
func TestUpdateLLMSection(t *testing.T) {
	doc := "# top comment\nsafety:\n  commands:\n    x: safe # why\nllm:\n  model: old\n  api_key: sk-old-0123456789\n  timeout: 90s\n"
	out, err := updateLLMSection([]byte(doc), llmSet, "api_key")
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"# top comment", "x: safe # why", "timeout: 90s", "model: m", "api_key_env: K", "base_url: http://h:1/v1"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
	if strings.Contains(s, "sk-old") || strings.Contains(s, "model: old") {
		t.Errorf("old values kept:\n%s", s)
	}
	fc, err := llm.ParseFileConfig(bytes.NewReader(out))
	if err != nil || fc.Model != "m" || fc.APIKeyEnv != "K" || fc.APIKey != "" {
		t.Errorf("read back: %+v %v", fc, err)
	}
	for _, bad := range []string{"- a list\n", "llm: [1, 2]\n", "just text\n", "a: [\n"} {
		if _, err := updateLLMSection([]byte(bad), llmSet, ""); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, empty := range []string{"", "\n", "# only a comment\n", "llm:\n", "llm: ~\n"} {
		out, err := updateLLMSection([]byte(empty), llmSet, "")
		if fc, perr := llm.ParseFileConfig(bytes.NewReader(out)); err != nil || perr != nil || fc == nil || fc.Model != "m" {
			t.Errorf("%q: %v %v %+v\n%s", empty, err, perr, fc, out)
		}
	}
}

// FuzzUpdateLLMSection: any file gives an error or a YAML document whose
// llm section holds exactly what was set.
func FuzzUpdateLLMSection(f *testing.F) {
	f.Add([]byte("safety:\n  commands:\n    x: safe\nllm:\n  model: a\n"))
	f.Add([]byte("llm: {model: a, timeout: 3}\n"))
	f.Add([]byte("&a llm: *a\n"))
	f.Add([]byte("---\n...\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := updateLLMSection(doc, llmSet, "api_key")
		if err != nil {
			return
		}
		var f struct {
			LLM map[string]any `yaml:"llm"`
		}
		if err := yaml.Unmarshal(out, &f); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		if f.LLM["model"] != "m" || f.LLM["api_key_env"] != "K" || f.LLM["api_key"] != nil {
			t.Fatalf("llm section %v\nin:\n%q\nout:\n%s", f.LLM, doc, out)
		}
	})
}

// FuzzSetLLMAnswers: the answers set-llm parses never panic, and accepted
// ones are what llm.Resolve accepts.
func FuzzSetLLMAnswers(f *testing.F) {
	for _, s := range []string{"1", "ollama", "4", "other", "http://localhost:8000/v1", "ftp://x", "MY_KEY", "9x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if c, err := parseProvider(s); err == nil && c.name == "" {
			t.Fatalf("%q: empty provider", s)
		}
		if validBaseURL(s) == nil {
			if _, err := llm.Resolve(llm.Config{Provider: llm.ProviderGeneric, BaseURL: s, Model: "m"}, nil, nil); err != nil {
				t.Fatalf("%q accepted but Resolve says %v", s, err)
			}
		}
		if validEnvName(s) == nil && (s == "" || strings.ContainsAny(s, " =\x00")) {
			t.Fatalf("%q accepted as a variable name", s)
		}
		action, task := parseREPLLine(s)
		if action == replTask && (task == "" || task != strings.TrimSpace(task)) {
			t.Fatalf("%q: task %q", s, task)
		}
	})
}

func TestParseREPLLine(t *testing.T) {
	for in, want := range map[string]replAction{"": replSkip, "   ": replSkip, "exit": replExit, " QUIT ": replExit,
		"exit now": replTask, "list files": replTask} {
		if got, _ := parseREPLLine(in); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}
