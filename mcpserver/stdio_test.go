package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/autoshell/agent/safety"
)

// TestStdioMalformedLines: over ServeIO, each malformed line gets the
// JSON-RPC error the specification names, with the id when it was a valid
// one, and the server answers the next request; only the end of input
// ends the session.
func TestStdioMalformedLines(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, err := New(Options{Policy: safety.DefaultPolicy(), MaxArgBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeIO(context.Background(), inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			var m map[string]any
			if lines.Scan() {
				json.Unmarshal(lines.Bytes(), &m)
			}
			got <- m
		}()
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
			return nil
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tc := range []struct {
		line string
		code float64
		id   any
	}{
		{`not json`, jsonrpc.CodeParseError, nil},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/list"`, jsonrpc.CodeParseError, nil},
		{`{"jsonrpc":"2.0","id":5,"method":"ping"} {"jsonrpc":"2.0","id":6,"method":"ping"}`, jsonrpc.CodeParseError, nil},
		{"\xff\xfe", jsonrpc.CodeParseError, nil},
		{`{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, 7.0},
		{`{"id":8,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, 8.0},
		{`[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]`, jsonrpc.CodeInvalidRequest, nil},
		{`[]`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":"s","method":3}`, jsonrpc.CodeInvalidRequest, "s"},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":"x"}`, jsonrpc.CodeInvalidRequest, 10.0},
		{`{"jsonrpc":"2.0","id":11}`, jsonrpc.CodeInvalidRequest, 11.0},
		{`"just a string"`, jsonrpc.CodeInvalidRequest, nil},
		{`42`, jsonrpc.CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 4<<20) + `"}}`, jsonrpc.CodeInvalidRequest, nil},
	} {
		send(tc.line)
		m := next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id || m["jsonrpc"] != "2.0" {
			t.Errorf("line %d %.60q: %v, want code %v id %v", i, tc.line, m, tc.code, tc.id)
		}
		send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		if m := next(); m["id"] != "after" || m["result"] == nil {
			t.Fatalf("after line %d: %v", i, m)
		}
	}
	send("")   // blank lines are skipped
	send("\r") // as are CRs of CRLF input
	send(`{"jsonrpc":"2.0","id":13,"method":"tools/list"}`)
	if m := next(); m["id"] != 13.0 || m["result"] == nil {
		t.Errorf("tools/list: %.200v", m)
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the end of input did not end the session")
	}
}

// FuzzStdioReader feeds arbitrary input to the stdio filter: it never
// panics, ends at the end of input, forwards only lines the SDK decodes
// as one message, and answers every other non-blank line with one
// JSON-RPC error.
func FuzzStdioReader(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `not json` + "\n"))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\r\n" + `{"jsonrpc":"1.0","id":"x","method":"a"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n\n\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"n","params":[1]}` + "\n" + strings.Repeat("x", 300)))
	f.Fuzz(func(t *testing.T, in []byte) {
		var fwd, errs bytes.Buffer
		if err := filterLines(bytes.NewReader(in), &fwd, &errs, 256); err != nil {
			t.Fatalf("filterLines: %v", err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(fwd.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			if _, err := jsonrpc.DecodeMessage([]byte(l)); err != nil {
				t.Fatalf("forwarded %q: %v", l, err)
			}
		}
		nonBlank := 0
		for _, l := range strings.Split(string(in), "\n") {
			if len(bytes.TrimSpace([]byte(l))) > 0 {
				nonBlank++
			}
		}
		fwdN := strings.Count(fwd.String(), "\n")
		errN := 0
		for _, l := range strings.Split(strings.TrimSuffix(errs.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			errN++
			var m struct {
				JSONRPC string
				Error   struct{ Code int }
			}
			if json.Unmarshal([]byte(l), &m) != nil || m.JSONRPC != "2.0" ||
				(m.Error.Code != jsonrpc.CodeParseError && m.Error.Code != jsonrpc.CodeInvalidRequest) {
				t.Fatalf("error line %q", l)
			}
		}
		if fwdN+errN != nonBlank {
			t.Fatalf("%d lines in, %d forwarded and %d answered", nonBlank, fwdN, errN)
		}
	})
}

// TestStdioAnswersBeforeEOF: a client that writes its requests, malformed
// lines among them, and closes its end at once gets an answer to each.
func TestStdioAnswersBeforeEOF(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, err := New(Options{Policy: safety.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`not json`,
		`{"jsonrpc":"1.0","id":2,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":"four","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":5}}`,
		`{"jsonrpc":"2.0","id":6,"method":"ping"}`,
	}, "\n") + "\n"
	var out syncBuffer
	if err := s.ServeIO(context.Background(), strings.NewReader(in), &out); err != nil && !errors.Is(err, io.EOF) {
		t.Logf("ServeIO: %v", err)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct{ ID any }
		if json.Unmarshal([]byte(l), &m) != nil {
			t.Fatalf("output line %q", l)
		}
		got[fmt.Sprint(m.ID)] = true
	}
	for _, id := range []string{"1", "<nil>", "2", "four", "5", "6"} {
		if !got[id] {
			t.Errorf("no answer with id %s in:\n%s", id, out.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the writer and the reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
