package scenarios

import (
	"encoding/json"
	"strings"
	"testing"
)

// RequestParts names each part of a request and accounts for every byte.
func TestRequestParts(t *testing.T) {
	sys := "You are an agent.\nOther tools (described when offered): grep.\n\n## Environment\nhost: h\n\n## Task\nfix it\n\n" +
		"## Plan\n1. a\n\n## Steps run\n1. read_file [ok]\n   output: x <y>\nPhase 1: done\n\nVariables:\n  v = \"1\"\n\n## Current phase 2: b\nSuccess criteria: c\n"
	msgs := []map[string]any{{"role": "system", "content": sys}, {"role": "user", "content": "Do phase 2."}}
	tools := []map[string]any{
		{"type": "function", "function": map[string]any{"name": "read_file", "parameters": map[string]any{"type": "object"}}},
		{"type": "function", "function": map[string]any{"name": "phase_done"}},
		{"type": "function", "function": map[string]any{"name": "submit_plan"}},
	}
	body, err := json.Marshal(map[string]any{"model": "m", "tools": tools, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := RequestParts(body)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, v := range parts {
		sum += v
	}
	if sum != len(body) {
		t.Errorf("parts sum to %d, the body is %d bytes: %v", sum, len(body), parts)
	}
	enc := func(s string) int { b, _ := json.Marshal(s); return len(b) - 2 }
	for name, text := range map[string]string{
		PartOtherTools:  "Other tools (described when offered): grep.\n",
		"environment":   "\n## Environment\nhost: h\n",
		"task":          "\n## Task\nfix it\n",
		"plan":          "\n## Plan\n1. a\n",
		"steps run":     "\n## Steps run\n1. read_file [ok]\n   output: x <y>\nPhase 1: done\n",
		PartVarsFiles:   "\nVariables:\n  v = \"1\"\n",
		"current phase": "\n## Current phase 2: b\nSuccess criteria: c\n",
	} {
		if parts[name] != enc(text) {
			t.Errorf("%s: %d bytes, want %d (%v)", name, parts[name], enc(text), parts)
		}
	}
	for _, name := range []string{PartStepTools, PartControlTools, PartRules, "user"} {
		if parts[name] == 0 {
			t.Errorf("no %s: %v", name, parts)
		}
	}
	for _, bad := range []string{"", "{", `{"tools":{}}`, `{"tools":[1]}`, `{"messages":[1]}`, `{"messages":"x"}`} {
		if _, err := RequestParts([]byte(bad)); err == nil {
			t.Errorf("RequestParts(%q) = nil error", bad)
		}
	}
	if got := systemSections("\n## Plan\n1. a\n"); len(got) != 1 || got[0].name != "plan" {
		t.Errorf("a prompt beginning with a heading: %+v", got)
	}
	if got := systemSections("Be an agent.\n\nEnvironment:\nhost: h\n"); len(got) != 2 || got[1].name != "environment" || got[1].text != "\nEnvironment:\nhost: h\n" {
		t.Errorf("ReAct's prompt: %+v", got)
	}
	if got := systemSections(""); len(got) != 0 {
		t.Errorf("empty prompt: %+v", got)
	}
	if !strings.Contains(sys, "<y>") {
		t.Fatal("the test lost its HTML-escaped text")
	}
}

// RequestParts accounts for every byte of any body it accepts.
func FuzzRequestParts(f *testing.F) {
	f.Add([]byte(`{"tools":[{"function":{"name":"phase_done"}}],"messages":[{"role":"system","content":"r\n## Plan\n1\n## Steps run\nVariables:\n"}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[1]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		parts, err := RequestParts(body)
		if err != nil {
			return
		}
		sum := 0
		for _, v := range parts {
			sum += v
		}
		if sum != len(body) {
			t.Fatalf("parts sum to %d of %d bytes: %v", sum, len(body), parts)
		}
	})
}
