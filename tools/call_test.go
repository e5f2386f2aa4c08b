package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

// recorder is a transport that records the commands it is given and
// answers sys_monitor's sampling script itself (/proc changes between two
// runs); everything else goes to the transport it wraps.
type recorder struct {
	transport.Transport
	mu   sync.Mutex
	cmds []transport.Command
}

func (r *recorder) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	r.mu.Lock()
	r.cmds = append(r.cmds, cmd)
	r.mu.Unlock()
	if strings.Contains(cmd.Command, sysSep) {
		return transport.Result{Stdout: stat1 + sysSep + "\n" + stat2 + sysSep + "\n" + meminfo + sysSep + "\n" + df}, nil
	}
	return r.Transport.Run(ctx, cmd)
}

func (r *recorder) HomeDir(ctx context.Context) (string, error) {
	return r.Transport.(transport.HomeDirer).HomeDir(ctx)
}

func (r *recorder) take() []transport.Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cmds
	r.cmds = nil
	return c
}

// evalTest is check_condition's evaluator in these tests.
func evalTest(c string) (bool, error) {
	if c == "bad(" {
		return false, errors.New("syntax error")
	}
	return c == "x == 1", nil
}

// callCase is a call of one tool, with the files it needs: setup makes
// them afresh in dir (emptied first), so that the call sees the same
// state each time it runs.
type callCase struct {
	name   string
	tool   string
	params func(dir string) map[string]any
	setup  func(t *testing.T, dir string)
}

func files(m map[string]string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		for name, content := range m {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, content, 0o640)
		}
	}
}

// callCases covers every tool of Default, with successes and
// model-fixable failures.
func callCases() []callCase {
	p := func(kv ...any) func(string) map[string]any {
		return func(dir string) map[string]any {
			m := map[string]any{}
			for i := 0; i < len(kv); i += 2 {
				v := kv[i+1]
				if s, ok := v.(string); ok {
					v = strings.ReplaceAll(s, "$DIR", dir)
				}
				m[kv[i].(string)] = v
			}
			return m
		}
	}
	return []callCase{
		{"exec", ExecuteCommandName, p("command", "echo hi; pwd; echo err >&2; exit 3", "cwd", "$DIR", "timeout", "5", "description", "d"), nil},
		{"exec no cwd", ExecuteCommandName, p("command", "echo x", "cwd", "$DIR/missing"), nil},
		{"exec timeout", ExecuteCommandName, p("command", "echo partial; sleep 5", "timeout", 1), nil},
		{"read latin-1", ReadFileName, p("file_path", "$DIR/l1.txt", "encoding", "ISO_8859-1", "offset", "2", "limit", 1),
			files(map[string]string{"l1.txt": "one\ncaf\xe9\nthree\n"})},
		{"read utf-8", ReadFileName, p("file_path", "$DIR/u.txt"), files(map[string]string{"u.txt": "héllo\n"})},
		{"read not utf-8", ReadFileName, p("file_path", "$DIR/l1.txt"), files(map[string]string{"l1.txt": "caf\xe9\n"})},
		{"read missing", ReadFileName, p("file_path", "$DIR/nope"), nil},
		{"write", WriteFileName, p("file_path", "$DIR/w.txt", "content", "new\n"), files(map[string]string{"w.txt": "old\n"})},
		{"write append", WriteFileName, p("file_path", "$DIR/w.txt", "content", "more\n", "mode", "a"), files(map[string]string{"w.txt": "old\n"})},
		{"write no dir", WriteFileName, p("file_path", "$DIR/no/w.txt", "content", "x"), nil},
		{"edit", EditFileName, p("file_path", "$DIR/e.conf", "search_pattern", `port=(\d+)`, "replacement", "port=${1}0", "regex", "true"),
			files(map[string]string{"e.conf": "port=80\nhost=x\n"})},
		{"edit ambiguous", EditFileName, p("file_path", "$DIR/e.conf", "search_pattern", "a", "replacement", "b"),
			files(map[string]string{"e.conf": "a a\n"})},
		{"condition true", CheckConditionName, p("condition", "x == 1", "context", map[string]any{"x": 1}), nil},
		{"condition false", CheckConditionName, p("condition", "x == 2"), nil},
		{"condition error", CheckConditionName, p("condition", "bad("), nil},
		{"find", FindName, p("name", "*.txt", "path", "$DIR", "type", "f", "maxdepth", 1), files(map[string]string{"a.txt": "", "sub/b.txt": ""})},
		{"grep", GrepName, p("pattern", "HELLO", "file", "$DIR/g.txt", "ignore_case", "true", "count_only", true),
			files(map[string]string{"g.txt": "hello\nx\nHello\n"})},
		{"grep nothing", GrepName, p("pattern", "zzz", "file", "$DIR/g.txt"), files(map[string]string{"g.txt": "hello\n"})},
		{"wget refused", WgetName, p("url", "http://127.0.0.1:1/", "output_file", "$DIR/w.out"), nil},
		{"ps", PsName, p("pid", " 2147483647 "), nil},
		{"ss", SsName, p("port", "1", "protocol", "tcp"), nil},
		{"lsof", LsofName, p("path", "$DIR/closed.txt"), files(map[string]string{"closed.txt": "x"})},
		{"sys_monitor", SysMonitorName, p("metric", "all"), nil},
		{"sys_monitor memory", SysMonitorName, p("metric", "memory"), nil},
		{"upload", UploadFileName, p("local_path", "$DIR/l/src.bin", "remote_path", "$DIR/r/up.bin"),
			files(map[string]string{"l/src.bin": "payload\n", "r/up.bin": "previous\n"})},
		{"container_list", ContainerListName, p("all", true), nil},
		{"container_logs unknown", ContainerLogsName, p("name", "agent-no-such-container", "tail", 3, "since", "1h"), nil},
		{"container_inspect unknown", ContainerInspectName, p("name", "agent-no-such-container"), nil},
		{"container_start unknown", ContainerStartName, p("name", "agent-no-such-container"), nil},
		{"container_stop unknown", ContainerStopName, p("name", "agent-no-such-container", "timeout", 1), nil},
		{"container_restart unknown", ContainerRestartName, p("name", "agent-no-such-container"), nil},
		{"upload missing", UploadFileName, p("local_path", "$DIR/l/nope", "remote_path", "$DIR/r/up.bin"), files(map[string]string{"r/x": ""})},
		{"download", DownloadFileName, p("local_path", "$DIR/l/back.bin", "remote_path", "$DIR/r/f.bin"),
			files(map[string]string{"r/f.bin": "remote\n", "l/.keep": ""})},
		{"semantic_search", SemanticSearchName, p("query", "restart the service", "path", "$DIR", "top_k", 2, "glob", "*.txt"),
			files(map[string]string{"a.txt": "restart the service\nnow\n", "b.txt": "other\n", "c.bin": "\x00\x01"})},
		{"semantic_search not a dir", SemanticSearchName, p("query", "x", "path", "$DIR/a.txt"), files(map[string]string{"a.txt": "x\n"})},
		{"session_files none", SessionFilesName, p("action", "list"), nil},
		{"download exists", DownloadFileName, p("local_path", "$DIR/l/back.bin", "remote_path", "$DIR/r/f.bin"),
			files(map[string]string{"r/f.bin": "remote\n", "l/back.bin": "mine\n"})},
	}
}

func newRecorder(t *testing.T) *recorder {
	lt, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lt.Close() })
	return &recorder{Transport: lt}
}

// Unwrap lets the recorded transport list directories.
func (r *recorder) Unwrap() transport.Transport { return r.Transport }

// TestPrepareRunSame: for every tool of Default, Prepare then Call.Run
// gives what Registry.Run gives, running the same commands; a
// Previewer's Call.Preview what its Preview gives.
func TestPrepareRunSame(t *testing.T) {
	reg := Default(testPolicy(), WithConditionEvaluator(evalTest), WithCPUInterval(250*time.Millisecond))
	rec := newRecorder(t)
	root := t.TempDir()
	covered := map[string]bool{}
	for _, c := range callCases() {
		t.Run(c.name, func(t *testing.T) {
			covered[c.tool] = true
			dir := filepath.Join(root, strings.ReplaceAll(c.name, " ", "_"))
			reset := func() {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if c.setup != nil {
					c.setup(t, dir)
				}
			}
			params := c.params(dir)
			ctx := ctxT(t)

			reset()
			want, wantErr := reg.Run(ctx, rec, c.tool, params)
			wantCmds := rec.take()
			wantFiles := snapshot(t, dir)

			reset()
			call, err := reg.Prepare(c.tool, params)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if call.b == nil {
				t.Fatalf("%s has no typed path", c.tool)
			}
			got, gotErr := call.Run(ctx, rec)
			gotCmds := rec.take()
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Call.Run\n%#v\nRegistry.Run\n%#v", got, want)
			}
			if !reflect.DeepEqual(gotCmds, wantCmds) {
				t.Fatalf("commands\n%#v\nwant\n%#v", gotCmds, wantCmds)
			}
			if got := snapshot(t, dir); !reflect.DeepEqual(got, wantFiles) {
				t.Fatalf("files after Call.Run %v, after Registry.Run %v", got, wantFiles)
			}
			t.Logf("%s", strings.TrimSpace(want.Observation))

			pv, isPreviewer := call.Tool().(Previewer)
			reset()
			gotP, ok, gotErr := call.Preview(ctx, rec)
			if ok != isPreviewer {
				t.Fatalf("Call.Preview ok %v, tool is a Previewer: %v", ok, isPreviewer)
			}
			if !ok {
				return
			}
			reset()
			wantP, wantErr := pv.Preview(ctx, rec, raw(t, params))
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(gotP, wantP) {
				t.Fatalf("Call.Preview %#v %v\nPreview %#v %v", gotP, gotErr, wantP, wantErr)
			}
		})
	}
	for _, n := range reg.Names() {
		if !covered[n] {
			t.Errorf("no case for %s", n)
		}
	}
}

// snapshot returns the files under dir and their content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[strings.TrimPrefix(p, dir)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCallTouches: every tool of Default is exactly one of Commander or
// Toucher; a Call says what each says.
func TestCallTouches(t *testing.T) {
	reg := Default(testPolicy())
	cases := []struct {
		tool   string
		params map[string]any
		line   string  // for a Commander
		eff    Effects // for a Toucher
	}{
		{ExecuteCommandName, map[string]any{"command": "ls -l", "cwd": "~/my dir"}, `cd -- ~/'my dir' && ls -l`, Effects{}},
		{ExecuteCommandName, map[string]any{"command": "ls"}, "ls", Effects{}},
		{FindName, map[string]any{"name": "*.go", "path": "-x"}, "find ./-x -name '*.go'", Effects{}},
		{GrepName, map[string]any{"pattern": "-v", "file": "a b"}, "grep -e -v -- a b", Effects{}},
		{WgetName, map[string]any{"url": "https://example.com/x"}, "wget -nv -- https://example.com/x", Effects{}},
		{PsName, map[string]any{"pid": "1"}, "ps -ww -o pid,ppid,user,pcpu,pmem,etime,args -p 1", Effects{}},
		{SsName, map[string]any{"options": []any{"-tln"}}, "", Effects{}},
		{LsofName, map[string]any{"port": 80}, "lsof -n -P -i :80", Effects{}},
		{ContainerListName, map[string]any{}, "", Effects{}},
		{ContainerLogsName, map[string]any{"name": "web"}, "", Effects{}},
		{ContainerInspectName, map[string]any{"name": "web"}, "", Effects{}},
		{ContainerStartName, map[string]any{"name": "web"}, "", Effects{}},
		{ContainerStopName, map[string]any{"name": "web"}, "", Effects{}},
		{ContainerRestartName, map[string]any{"name": "web", "timeout": 2}, "", Effects{}},
		{ReadFileName, map[string]any{"file_path": "~/a.txt", "encoding": "latin1"}, "",
			Effects{Files: []Access{{Op: safety.FileRead, Path: "~/a.txt"}}}},
		{WriteFileName, map[string]any{"file_path": "rel/w.txt", "content": "x"}, "",
			Effects{Files: []Access{{Op: safety.FileWrite, Path: "rel/w.txt"}}}},
		{EditFileName, map[string]any{"file_path": "/etc/hosts", "search_pattern": "a", "replacement": "b"}, "",
			Effects{Files: []Access{{Op: safety.FileEdit, Path: "/etc/hosts"}}}},
		{CheckConditionName, map[string]any{"condition": "x"}, "", Effects{}},
		{SemanticSearchName, map[string]any{"query": "q", "path": "~/src"}, "", Effects{Files: []Access{{Op: safety.FileRead, Path: "~/src"}}}},
		{SysMonitorName, map[string]any{"metric": "cpu"}, "", Effects{}},
		{SessionFilesName, map[string]any{"action": "get", "reference": "this"}, "", Effects{}},
		{UploadFileName, map[string]any{"local_path": "~/src.tgz", "remote_path": "/tmp/src.tgz"}, "", Effects{
			Files: []Access{{Op: safety.FileWrite, Path: "/tmp/src.tgz"}, {Op: safety.FileRead, Path: "~/src.tgz", Local: true}},
			Min:   safety.Medium, Reason: "upload_file: copies ~/src.tgz from this machine to the host"}},
		{DownloadFileName, map[string]any{"local_path": "out/", "remote_path": "~/log.txt"}, "", Effects{
			Files: []Access{{Op: safety.FileRead, Path: "~/log.txt"}, {Op: safety.FileWrite, Path: "out/", Local: true}},
			Min:   safety.Medium, Reason: "download_file: writes out/ on this machine"}},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.tool] = true
		call, err := reg.Prepare(c.tool, c.params)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		tool := call.Tool()
		cmd, isCmd := tool.(Commander)
		tc, isTouch := tool.(Toucher)
		if isCmd == isTouch {
			t.Fatalf("%s: Commander %v, Toucher %v; want exactly one", c.tool, isCmd, isTouch)
		}
		line, lok, lerr := call.CommandLine()
		eff, eok, eerr := call.Touches()
		if lok != isCmd || eok != isTouch || lerr != nil || eerr != nil {
			t.Fatalf("%s: CommandLine ok %v %v, Touches ok %v %v", c.tool, lok, lerr, eok, eerr)
		}
		r := raw(t, c.params)
		if isCmd {
			want, err := cmd.CommandLine(r)
			if err != nil || line != want {
				t.Errorf("%s: Call.CommandLine %q, CommandLine %q %v", c.tool, line, want, err)
			}
			if c.line != "" && line != c.line {
				t.Errorf("%s: line %q, want %q", c.tool, line, c.line)
			}
			continue
		}
		want, err := tc.Touches(r)
		if err != nil || !reflect.DeepEqual(eff, want) {
			t.Errorf("%s: Call.Touches %+v, Touches %+v %v", c.tool, eff, want, err)
		}
		if !reflect.DeepEqual(eff, c.eff) {
			t.Errorf("%s: Touches %+v, want %+v", c.tool, eff, c.eff)
		}
		if len(eff.Files) > 0 && eff.Files[0].Local {
			t.Errorf("%s: Files[0] is local", c.tool)
		}
	}
	for _, n := range reg.Names() {
		if !seen[n] {
			t.Errorf("no case for %s", n)
		}
	}
}

// refErr is the error the tool's own raw-JSON methods find in params,
// with no I/O: CommandLine's for a Commander, Touches' for a Toucher.
// It is what Validate found before Prepare existed.
func refErr(t Tool, r json.RawMessage) error {
	if c, ok := t.(Commander); ok {
		_, err := c.CommandLine(r)
		return err
	}
	_, err := t.(Toucher).Touches(r)
	return err
}

// TestPrepareErrors: bad parameters give the same errors through Prepare
// as through Validate, and those Validate gave before (the tool's own
// checks, prefixed with its name).
func TestPrepareErrors(t *testing.T) {
	reg := Default(safety.DefaultPolicy())
	cases := []struct {
		tool   string
		params map[string]any
	}{
		{"nope", map[string]any{}},
		{"execute_command", map[string]any{"command": "ls", "timeout": 1.5}},
		{"execute_command", map[string]any{}},
		{"execute_command", map[string]any{"command": "  "}},
		{"execute_command", map[string]any{"command": "ls", "timeout": -1}},
		{"execute_command", map[string]any{"command": make(chan int)}},
		{"edit_file", map[string]any{"file_path": "a", "search_pattern": "x", "replacement": "y", "regex": "yes"}},
		{"edit_file", map[string]any{"file_path": "a", "search_pattern": "", "replacement": "y"}},
		{"find", map[string]any{"name": "x", "type": "l"}},
		{"find", map[string]any{"name": "x", "maxdepth": -1}},
		{"grep", map[string]any{"pattern": "x", "file": " "}},
		{"ps", map[string]any{"pid": "1; rm"}},
		{"ps", map[string]any{"options": []any{"-e", "--bogus"}}},
		{"ss", map[string]any{"options": []any{"state"}}},
		{"ss", map[string]any{"options": []any{"-tK"}}},
		{"ss", map[string]any{"port": 70000}},
		{"wget", map[string]any{"url": "file:///etc/passwd"}},
		{"lsof", map[string]any{}},
		{"lsof", map[string]any{"options": []any{"-D", "x"}}},
		{"read_file", map[string]any{"file_path": "x", "extra": 1}},
		{"read_file", map[string]any{"file_path": "x", "encoding": "utf-16"}},
		{"write_file", map[string]any{"file_path": "x", "content": "y", "mode": "x"}},
		{"check_condition", map[string]any{"condition": " "}},
		{"sys_monitor", map[string]any{"metric": "gpu"}},
		{"upload_file", map[string]any{"local_path": "", "remote_path": "x"}},
		{"download_file", map[string]any{"local_path": "x"}},
	}
	for _, c := range cases {
		call, err := reg.Prepare(c.tool, c.params)
		verr := reg.Validate(c.tool, c.params)
		if err == nil || call != nil {
			t.Errorf("%s %v: Prepare gave %v, %v", c.tool, c.params, call, err)
			continue
		}
		if err.Error() != verr.Error() {
			t.Errorf("%s %v: Prepare %q, Validate %q", c.tool, c.params, err, verr)
		}
		if c.tool == "nope" {
			if !errors.Is(err, ErrUnknownTool) {
				t.Errorf("%v does not wrap ErrUnknownTool", err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidParams) {
			t.Errorf("%s: %v does not wrap ErrInvalidParams", c.tool, err)
		}
		r, merr := json.Marshal(c.params)
		if merr != nil {
			continue // Validate's own error, no tool check
		}
		tool, _ := reg.Lookup(c.tool)
		if want := c.tool + ": " + refErr(tool, r).Error(); err.Error() != want {
			t.Errorf("%s: Prepare %q, the tool's own check %q", c.tool, err, want)
		}
		// Run reports the same problem to the model.
		out, rerr := reg.Run(t.Context(), nil, c.tool, c.params)
		if rerr != nil || out.Observation != "[ERROR]: "+err.Error() {
			t.Errorf("%s: Run %q %v, Prepare %q", c.tool, out.Observation, rerr, err)
		}
	}
}

// TestCoerceStable: of several invalid values, the error always names the
// first parameter in sorted order (map order used to choose it).
func TestCoerceStable(t *testing.T) {
	reg := Default(safety.DefaultPolicy())
	params := map[string]any{"timeout": map[string]any{}, "command": []any{"a"}, "cwd": true, "zz": 1}
	for range 50 {
		err := reg.Validate(ExecuteCommandName, params)
		if want := `execute_command: invalid parameters: parameter "command": want a string, got an array`; err == nil || err.Error() != want {
			t.Fatalf("%v, want %s", err, want)
		}
	}
}

// countingValue counts how often it is encoded.
type countingValue struct {
	s string
	n *atomic.Int32
}

func (v countingValue) MarshalJSON() ([]byte, error) {
	v.n.Add(1)
	return json.Marshal(v.s)
}

// TestCallEncodesOnce: Prepare encodes the parameters once; classifying,
// previewing and running the Call encode nothing more.
func TestCallEncodesOnce(t *testing.T) {
	reg := Default(testPolicy())
	tr := newRecorder(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "x\n", 0o644)
	var n atomic.Int32
	for _, c := range []struct {
		tool   string
		params map[string]any
	}{
		{ExecuteCommandName, map[string]any{"command": countingValue{"echo hi", &n}}},
		{GrepName, map[string]any{"pattern": countingValue{"x", &n}, "file": filepath.Join(dir, "f")}},
		{WriteFileName, map[string]any{"file_path": filepath.Join(dir, "f"), "content": countingValue{"x\n", &n}}},
	} {
		n.Store(0)
		call, err := reg.Prepare(c.tool, c.params)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := call.CommandLine(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := call.Touches(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := call.Preview(t.Context(), tr); err != nil {
			t.Fatal(err)
		}
		if out, err := call.Run(t.Context(), tr); err != nil || out.IsError {
			t.Fatal(out, err)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("%s: parameters encoded %d times, want 1", c.tool, got)
		}
	}
}

// outside is a tool registered from outside the package: no typed path.
type outside struct {
	name string
	got  []string // the raw parameters each method received
}

func (o *outside) Name() string        { return o.name }
func (o *outside) Description() string { return "a test tool" }
func (o *outside) Schema() *Schema     { return &Schema{Type: "object"} }
func (o *outside) Run(_ context.Context, _ transport.Transport, r json.RawMessage) (Output, error) {
	o.got = append(o.got, "run "+string(r))
	return TextOutput("ran " + string(r)), nil
}

type outsideCommander struct{ outside }

func (o *outsideCommander) CommandLine(r json.RawMessage) (string, error) {
	o.got = append(o.got, "line "+string(r))
	return "echo " + string(r), nil
}

type outsideToucher struct{ outside }

func (o *outsideToucher) Touches(r json.RawMessage) (Effects, error) {
	o.got = append(o.got, "touches "+string(r))
	return Effects{Files: []Access{{Op: safety.FileWrite, Path: string(r)}}}, errors.New("touch error")
}

func (o *outsideToucher) Preview(_ context.Context, _ transport.Transport, r json.RawMessage) (Output, error) {
	o.got = append(o.got, "preview "+string(r))
	return TextOutput("would " + string(r)), nil
}

// TestCallOutside: a tool without a typed path is called through its
// raw-JSON methods, with the parameters as Prepare encoded them.
func TestCallOutside(t *testing.T) {
	cmd := &outsideCommander{outside{name: "cmd"}}
	tch := &outsideToucher{outside{name: "touch"}}
	plain := &outside{name: "plain"}
	reg := NewRegistry(cmd, tch, plain)
	params := map[string]any{"a": 1, "anything": []any{"goes"}}
	const r = `{"a":1,"anything":["goes"]}`
	if err := reg.Validate("plain", params); err != nil {
		t.Fatal(err)
	}

	c, err := reg.Prepare("cmd", params)
	if err != nil || string(c.Raw) != r || c.Name != "cmd" || c.Tool() != cmd || !reflect.DeepEqual(c.Params, params) {
		t.Fatalf("%+v %v", c, err)
	}
	if line, ok, err := c.CommandLine(); line != "echo "+r || !ok || err != nil {
		t.Errorf("CommandLine %q %v %v", line, ok, err)
	}
	if _, ok, err := c.Touches(); ok || err != nil {
		t.Errorf("Touches %v %v", ok, err)
	}
	if _, ok, err := c.Preview(t.Context(), nil); ok || err != nil {
		t.Errorf("Preview %v %v", ok, err)
	}
	if out, err := c.Run(t.Context(), nil); out.Stdout != "ran "+r || err != nil {
		t.Errorf("Run %+v %v", out, err)
	}
	if want := []string{"line " + r, "run " + r}; !reflect.DeepEqual(cmd.got, want) {
		t.Errorf("calls %q, want %q", cmd.got, want)
	}

	c, err = reg.Prepare("touch", params)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.CommandLine(); ok || err != nil {
		t.Errorf("CommandLine %v %v", ok, err)
	}
	eff, ok, err := c.Touches()
	if !ok || err == nil || err.Error() != "touch error" || eff.Files[0].Path != r {
		t.Errorf("Touches %+v %v %v", eff, ok, err)
	}
	if out, ok, err := c.Preview(t.Context(), nil); out.Stdout != "would "+r || !ok || err != nil {
		t.Errorf("Preview %+v %v %v", out, ok, err)
	}
	if _, err := c.Run(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"touches " + r, "preview " + r, "run " + r}; !reflect.DeepEqual(tch.got, want) {
		t.Errorf("calls %q, want %q", tch.got, want)
	}

	c, err = reg.Prepare("plain", nil)
	if err != nil || string(c.Raw) != "null" {
		t.Fatalf("%+v %v", c, err)
	}
	if _, ok, _ := c.CommandLine(); ok {
		t.Error("plain is a Commander")
	}
	if _, ok, _ := c.Touches(); ok {
		t.Error("plain is a Toucher")
	}
	if _, ok, _ := c.Preview(t.Context(), nil); ok {
		t.Error("plain is a Previewer")
	}
}

// TestCallConcurrent: one Call previewed and run from many goroutines
// (the race detector watches the shared parameters).
func TestCallConcurrent(t *testing.T) {
	reg := Default(testPolicy())
	tr := newRecorder(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "a\nb\n", 0o644)
	calls := []map[string]any{
		{"tool": ReadFileName, "file_path": filepath.Join(dir, "f"), "encoding": "LATIN-1"},
		{"tool": PsName, "pid": "1", "options": []any{"-o", "pid"}},
		{"tool": FindName, "name": "f", "path": dir, "maxdepth": 1},
	}
	var wg sync.WaitGroup
	for _, m := range calls {
		name := m["tool"].(string)
		delete(m, "tool")
		c, err := reg.Prepare(name, m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := reg.Run(t.Context(), tr, name, m)
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			wg.Go(func() {
				if _, _, err := c.Preview(t.Context(), tr); err != nil {
					t.Error(err)
				}
				got, err := c.Run(t.Context(), tr)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %+v %v, want %+v", name, got, err, want)
				}
			})
		}
	}
	wg.Wait()
}

// FuzzPrepare: random JSON object parameters for every tool never panic,
// Prepare fails iff Validate does, with the error the tool's own checks
// give, and a prepared Call says what the tool says.
func FuzzPrepare(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"command":"ls","cwd":"~/x y","timeout":"30"}`, `{"command":" "}`,
		`{"file_path":"a","encoding":"Latin_1","offset":2,"limit":"3"}`, `{"file_path":"a","encoding":"ebcdic"}`,
		`{"file_path":"a","content":"x","mode":"a"}`, `{"file_path":"a","search_pattern":"(","replacement":"","regex":"true","count":-1}`,
		`{"condition":"x == 1","context":{"a":[1,2]}}`, `{"name":"*.go","path":"-x","type":"d","maxdepth":2.0}`,
		`{"pattern":"-e","file":"a b  c","recursive":true}`, `{"url":"ftp://h/x","output_file":"-"}`,
		`{"pid":" 1,2 ","user":"root","name":"sh","options":["-ef","--sort -pcpu"]}`, `{"options":"-tlnp","port":"22","protocol":"udp"}`,
		`{"path":"/tmp","port":0,"user":"-x","options":["+D","/x"]}`, `{"metric":"disk"}`, `{"local_path":"~/a","remote_path":"b","overwrite":"false"}`,
		`{"description":"d","save_output_as":"v","condition":"c","extra":null}`, `{"command":["a"],"timeout":{}}`, `{"metric":1e400}`,
	} {
		f.Add(s)
	}
	reg := Default(safety.DefaultPolicy())
	names := append(reg.Names(), "no_such_tool")
	f.Fuzz(func(t *testing.T, s string) {
		var params map[string]any
		if json.Unmarshal([]byte(s), &params) != nil || params == nil {
			t.Skip()
		}
		for _, name := range names {
			call, err := reg.Prepare(name, params)
			verr := reg.Validate(name, params)
			if (err == nil) != (verr == nil) || err != nil && err.Error() != verr.Error() {
				t.Fatalf("%s %s: Prepare %v, Validate %v", name, s, err, verr)
			}
			tool, ok := reg.Lookup(name)
			if !ok {
				if !errors.Is(err, ErrUnknownTool) {
					t.Fatalf("%s: %v", name, err)
				}
				continue
			}
			r, merr := json.Marshal(params)
			if merr != nil {
				t.Fatal(merr)
			}
			ref := refErr(tool, r)
			if err != nil {
				if ref == nil || err.Error() != name+": "+ref.Error() || !errors.Is(err, ErrInvalidParams) {
					t.Fatalf("%s %s: Prepare %v, the tool's own check %v", name, s, err, ref)
				}
				continue
			}
			if ref != nil {
				t.Fatalf("%s %s: Prepare passed, the tool's own check %v", name, s, ref)
			}
			if string(call.Raw) != string(r) {
				t.Fatalf("Raw %s, want %s", call.Raw, r)
			}
			if c, ok := tool.(Commander); ok {
				want, _ := c.CommandLine(r)
				if line, ok, err := call.CommandLine(); !ok || err != nil || line != want {
					t.Fatalf("%s %s: Call.CommandLine %q %v, CommandLine %q", name, s, line, err, want)
				}
			} else {
				want, _ := tool.(Toucher).Touches(r)
				if eff, ok, err := call.Touches(); !ok || err != nil || !reflect.DeepEqual(eff, want) {
					t.Fatalf("%s %s: Call.Touches %+v %v, Touches %+v", name, s, eff, err, want)
				}
			}
		}
	})
}

// BenchmarkPrepareRun: a step of execute_command prepared once, its line
// taken for classification, then run, against Validate, CommandLine on
// raw JSON and Registry.Run (the executor before Prepare: three
// encodings, three decodings). The transport does nothing, so the
// figures are the tools package's own.
func BenchmarkPrepareRun(b *testing.B) {
	reg := Default(safety.DefaultPolicy())
	tr := nopTransport{}
	params := map[string]any{"command": "ls -l /var/log", "cwd": "~/work", "timeout": 30, "description": "list logs"}
	ctx := context.Background()
	b.Run("Prepare+CommandLine+Run", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, err := reg.Prepare(ExecuteCommandName, params)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.CommandLine(); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Run(ctx, tr); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Validate+CommandLine(raw)+Registry.Run", func(b *testing.B) {
		b.ReportAllocs()
		tool, _ := reg.Lookup(ExecuteCommandName)
		for b.Loop() {
			if err := reg.Validate(ExecuteCommandName, params); err != nil {
				b.Fatal(err)
			}
			r, _ := json.Marshal(params)
			if _, err := tool.(Commander).CommandLine(r); err != nil {
				b.Fatal(err)
			}
			if _, err := reg.Run(ctx, tr, ExecuteCommandName, params); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// nopTransport answers every command with "ok".
type nopTransport struct{ transport.Transport }

func (nopTransport) Run(context.Context, transport.Command) (transport.Result, error) {
	return transport.Result{Stdout: "ok\n"}, nil
}
