package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"testing"
	"time"
)

// TestMCPStdioMalformed: `agent mcp` on a raw pipe answers malformed lines
// (invalid JSON, "jsonrpc": "1.0", a batch, an object id) with -32700 or
// -32600 and serves the next request; the end of input ends it, exit 0.
func TestMCPStdioMalformed(t *testing.T) {
	cmd := exec.Command("agent", "mcp")
	cmd.Env = mcpEnv(t, t.TempDir())
	cmd.Stderr = &testWriter{t: t}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	answer := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		got := make(chan map[string]any, 1)
		go func() {
			var m map[string]any
			if sc.Scan() {
				json.Unmarshal(sc.Bytes(), &m)
			}
			got <- m
		}()
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to %s", line)
			return nil
		}
	}
	if m := answer(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for _, tc := range []struct {
		line string
		code float64
	}{
		{`{"jsonrpc": "2.0", "id": 2, "method": `, -32700},
		{`{"jsonrpc": "1.0", "id": 3, "method": "tools/list"}`, -32600},
		{`[{"jsonrpc": "2.0", "id": 4, "method": "tools/list"}]`, -32600},
		{`{"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}`, -32600},
	} {
		m := answer(tc.line)
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != tc.code {
			t.Errorf("%s: %v, want error %v", tc.line, m, tc.code)
		}
		if m := answer(`{"jsonrpc":"2.0","id":"next","method":"tools/list"}`); m["id"] != "next" || m["result"] == nil {
			t.Fatalf("after %s: %.100v", tc.line, m)
		}
	}
	in.Close()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("agent mcp at the end of input: %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("agent mcp did not end at the end of its input")
	}
}
