package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/execctx"
)

// TestSessionFiles answers from an execution context's index: list, get
// and search, with references, types and counts; bad parameters are
// clear errors.
func TestSessionFiles(t *testing.T) {
	c := execctx.New()
	c.BeginTask()
	at := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	c.Touch(execctx.SessionFile{Host: "web01", Path: "/etc/app.conf", Ops: []execctx.FileEvent{execctx.FileRead}, Size: 42, When: at})
	c.BeginTask()
	c.Touch(execctx.SessionFile{Host: "web01", Path: "/tmp/a.log", Local: "/home/me/a.log", Ops: []execctx.FileEvent{execctx.FileUploaded}, Size: 2048, When: at.Add(time.Minute)})
	c.Touch(execctx.SessionFile{Host: "web01", Path: "/tmp/b.log", Local: "/home/me/b.log", Ops: []execctx.FileEvent{execctx.FileUploaded}, Size: 10, When: at.Add(2 * time.Minute)})
	reg := Default(testPolicy(), WithSessionFiles(c.FindFiles))
	tr := targets(t)[0].tr
	for _, tc := range []struct {
		params map[string]any
		want   string
		isErr  bool
	}{
		{map[string]any{}, "3 files of this session (all), newest first:\n1. uploaded /tmp/b.log (on web01, local copy /home/me/b.log, 10 B, 07:02:00)\n2. uploaded /tmp/a.log", false},
		{map[string]any{"action": "get"}, "/tmp/b.log", false},
		{map[string]any{"action": "get", "reference": "these", "file_type": "log", "count": 2}, "/tmp/b.log\n/tmp/a.log", false},
		{map[string]any{"action": "get", "reference": "previous"}, "/etc/app.conf", false},
		{map[string]any{"action": "list", "reference": "this", "file_type": "config"}, "1 files of this session (this, file_type config), newest first:\n1. read /etc/app.conf (on web01, 42 B, 07:00:00)\n", false},
		{map[string]any{"action": "search", "query": "a.log"}, "1. uploaded /tmp/a.log", false},
		{map[string]any{"action": "search", "query": "*.conf", "reference": "all"}, "1. read /etc/app.conf", false},
		{map[string]any{"action": "list", "file_type": "archive"}, "No file of this session matches (all, file_type archive).", false},
		{map[string]any{"action": "get", "file_type": "archive"}, "no file of this session matches", true},
		{map[string]any{"action": "delete"}, `must be one of "list", "get", "search"`, true},
		{map[string]any{"action": "search"}, "search needs a query", true},
		{map[string]any{"action": "get", "query": "x"}, "query is for action search", true},
		{map[string]any{"reference": "that"}, "reference", true},
		{map[string]any{"reference": "this", "count": 2}, "use these with count 2", true},
		{map[string]any{"count": -1}, "count -1", true},
		{map[string]any{"action": "search", "query": "[a-"}, "name pattern", true},
	} {
		out := runTool(t, tr, reg, SessionFilesName, tc.params)
		if out.IsError != tc.isErr || !strings.Contains(out.Observation, tc.want) {
			t.Errorf("%v: %q (error %v), want %q", tc.params, out.Observation, out.IsError, tc.want)
		}
	}
	if out := runTool(t, tr, Default(testPolicy()), SessionFilesName, map[string]any{}); !out.IsError {
		t.Errorf("no index: %+v", out)
	}
}

// FuzzSessionFilesParams: any JSON given as session_files' parameters is
// an answer or a clear tool error, never a panic or a Go error.
func FuzzSessionFilesParams(f *testing.F) {
	f.Add([]byte(`{"action":"get","reference":"these","file_type":"log","count":2}`))
	f.Add([]byte(`{"action":"search","query":"*.co[nf"}`))
	f.Add([]byte(`{"reference":"this","count":"3"}`))
	f.Add([]byte(`[]`))
	c := execctx.New()
	c.BeginTask()
	c.Touch(execctx.SessionFile{Host: "h", Path: "/var/log/a.log", Ops: []execctx.FileEvent{execctx.FileUploaded}, Size: 1})
	c.Touch(execctx.SessionFile{Host: "h", Path: "/etc/x.conf", Ops: []execctx.FileEvent{execctx.FileRead}, Size: -1})
	tool := newSessionFiles(newConfig(testPolicy(), []Option{WithSessionFiles(c.FindFiles)}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := tool.Run(context.Background(), nil, raw)
		if err != nil {
			t.Fatalf("Go error %v for %q", err, raw)
		}
		if out.IsError && !strings.HasPrefix(out.Observation, "[ERROR]: session_files") {
			t.Fatalf("unclear error %q", out.Observation)
		}
	})
}
