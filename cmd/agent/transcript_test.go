package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/testenv"
)

const transcriptKey = "sk-transcript-secret-0123456789abcd"

// transcriptLine is what a test reads back from a --transcript file.
type transcriptLine struct {
	Event    string `json:"event"`
	Seq      int    `json:"seq"`
	Messages []struct {
		Role       string                `json:"role"`
		ToolCalls  []struct{ ID string } `json:"tool_calls"`
		ToolCallID string                `json:"tool_call_id"`
		Content    string                `json:"content"`
	} `json:"messages"`
	Tools     []struct{ Name string } `json:"tools"`
	ToolCalls []struct {
		ID        string
		Name      string
		Arguments map[string]any
	} `json:"tool_calls"`
	Error string `json:"error"`
}

// readTranscript checks that path is JSON lines, each a request, response
// or error with a seq, requests and their outcomes alternating, and returns
// them.
func readTranscript(t *testing.T, path string) []transcriptLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(transcriptKey)) || bytes.Contains(data, []byte("transcript-secret")) {
		t.Fatalf("the API key is in the transcript:\n%s", data)
	}
	var out []transcriptLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for n := 1; sc.Scan(); n++ {
		var l transcriptLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		if err := dec.Decode(&l); err != nil || dec.More() {
			t.Fatalf("line %d is not one JSON object (%v): %s", n, err, sc.Text())
		}
		want := "request"
		if n%2 == 0 {
			want = "response|error"
		}
		if !strings.Contains(want, l.Event) || l.Event == "" || l.Seq != (n+1)/2 {
			t.Fatalf("line %d: event %q seq %d, want %s seq %d", n, l.Event, l.Seq, want, (n+1)/2)
		}
		out = append(out, l)
	}
	return out
}

// checkPaired checks DESIGN.md's wire rule on what the transcript recorded:
// every tool call of a response is answered by exactly one tool message in
// the next request, right after the assistant message that made it.
func checkPaired(t *testing.T, lines []transcriptLine) {
	t.Helper()
	for i := 1; i+1 < len(lines); i += 2 {
		resp, next := lines[i], lines[i+1]
		if resp.Event != "response" || len(resp.ToolCalls) == 0 {
			continue
		}
		msgs := next.Messages
		at := -1
		for j, m := range msgs {
			if m.Role == "assistant" && len(m.ToolCalls) == len(resp.ToolCalls) && m.ToolCalls[0].ID == resp.ToolCalls[0].ID {
				at = j
			}
		}
		if at < 0 {
			t.Errorf("seq %d: the reply's tool calls are not in the next request", resp.Seq)
			continue
		}
		for k, tc := range resp.ToolCalls {
			if at+1+k >= len(msgs) || msgs[at+1+k].Role != "tool" || msgs[at+1+k].ToolCallID != tc.ID {
				t.Errorf("seq %d: tool call %s has no tool reply in place", resp.Seq, tc.ID)
			}
		}
	}
}

// TestTranscriptTask runs agent -c with --transcript against the scripted
// model on this machine and reads the file back: valid JSON lines, every
// request and reply, each tool call paired with its reply, secrets in
// output and arguments redacted, the API key nowhere.
func TestTranscriptTask(t *testing.T) {
	dir := t.TempDir()
	srv := testenv.StartLLMServer(t,
		testenv.Calls(
			testenv.ToolCall{ID: "call_a", Name: "execute_command", Arguments: `{"command":"echo PASSWORD=hunter2-secret API_TOKEN=tok-value-12345","api_key":"tok-value-67890"}`},
			testenv.ToolCall{ID: "call_b", Name: "execute_command", Arguments: `{"command":"echo hi","save_output_as":"greet"}`},
		),
		testenv.Text("Both ran."),
	)
	t.Setenv("HOME", dir)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("CI", "true")
	t.Setenv("AGENT_BASE_URL", srv.URL)
	t.Setenv("AGENT_MODEL", "gpt-4o-mini")
	t.Setenv("AGENT_API_KEY", transcriptKey)
	path := filepath.Join(dir, "t.jsonl")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"--mode", "react", "--transcript", path, "-c", "say hi; my key is " + transcriptKey},
		strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	srv.CheckNoRejections(t)
	lines := readTranscript(t, path)
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 2 requests and 2 responses", len(lines))
	}
	checkPaired(t, lines)
	if len(lines[0].Tools) == 0 || !strings.Contains(lines[0].Messages[len(lines[0].Messages)-1].Content, "my key is sk-…abcd") {
		t.Errorf("first request: tools %v, messages %+v", lines[0].Tools, lines[0].Messages)
	}
	if got := lines[1].ToolCalls[0].Arguments["api_key"]; got != "[REDACTED]" {
		t.Errorf("secret-named argument: %v", got)
	}
	data, _ := os.ReadFile(path)
	for _, secret := range []string{"hunter2", "tok-value"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%q is in the transcript", secret)
		}
	}
	if !bytes.Contains(data, []byte(`"content":"hi\n"`)) {
		t.Errorf("the output of echo hi is not in the transcript:\n%s", data)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode: %v %v", fi.Mode(), err)
	}
}

// FuzzTranscriptArguments: whatever a model sends as tool-call arguments,
// the transcript line is one valid JSON object.
func FuzzTranscriptArguments(f *testing.F) {
	f.Add([]byte(`{"command":"echo PASSWORD=x"}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(`null`))
	f.Add([]byte("{\"a\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, args []byte) {
		b, err := json.Marshal(trResponse{Event: "response", ToolCalls: trCalls(nil, []llm.ToolCall{{ID: "x", Name: "n", Arguments: args}})})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || bytes.ContainsRune(b, '\n') {
			t.Fatalf("not one JSON line: %v %s", err, b)
		}
	})
}

// An existing transcript readable by others is made 0600 before anything
// is appended to it.
func TestTranscriptExistingFileMadePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte("{\"event\":\"old\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, closeT, err := transcriptOptions(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	closeT()
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after opening: %v %v, want 0600", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "{\"event\":\"old\"}\n") {
		t.Errorf("old content lost: %q", b)
	}
}
