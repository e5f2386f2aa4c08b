package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/tools"
)

// TestMCPStdio drives `agent mcp` over stdio with the SDK's client against
// four in-process SSH hosts (vub1…vub4): the tools listed with their
// schemas, a safe command, a medium one approved and one declined through
// elicitation, write then undo, a cancelled long command (progress
// reported, no process left), 20 concurrent calls to the 4 hosts, a host
// that is down and bad input — each a clear tool error while the server
// keeps serving — and a high command refused for a client that cannot be
// asked, with nothing changed.
func TestMCPStdio(t *testing.T) {
	hosts := map[string]testenv.Host{}
	var srv1 *testenv.SSHServer
	for i := 1; i <= 4; i++ {
		s := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
		hosts[fmt.Sprintf("vub%d", i)] = s.Host
		if i == 1 {
			srv1 = s
		}
	}
	home := t.TempDir()
	sshConfigFor(t, home, hosts)
	env := mcpEnv(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var answerMu sync.Mutex
	approve := true
	user := &mcpClient{answer: func(string) *mcp.ElicitResult {
		answerMu.Lock()
		defer answerMu.Unlock()
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve}}
	}}
	setAnswer := func(v bool) { answerMu.Lock(); approve = v; answerMu.Unlock() }
	cs := connectStdio(t, ctx, env, user)

	t.Run("list tools", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		reg := tools.Default(safety.DefaultPolicy())
		want := append(reg.Names(), "list_hosts", "run_plan", "undo")
		var got []string
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
			schema, _ := tl.InputSchema.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			req, _ := schema["required"].([]any)
			if tt, ok := reg.Lookup(tl.Name); ok {
				if props["host"] == nil || !slices.Contains(req, any("host")) || schema["additionalProperties"] != false {
					t.Errorf("%s: schema %v: want a required host and no other properties", tl.Name, schema)
				}
				for name, p := range tt.Schema().Properties {
					pp, _ := props[name].(map[string]any)
					if pp == nil || pp["type"] != p.Type {
						t.Errorf("%s.%s: %v, want the LLM tool's type %s", tl.Name, name, props[name], p.Type)
					}
				}
				if len(props) != len(tt.Schema().Properties)+1 {
					t.Errorf("%s: %d properties, want the tool's %d and host", tl.Name, len(props), len(tt.Schema().Properties))
				}
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("tools %v, want %v", got, want)
		}
	})

	t.Run("safe command", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": "vub1", "command": "echo hello; pwd"}})
		if err != nil {
			t.Fatal(err)
		}
		if text := resultText(res); res.IsError || text != "hello\n"+srv1.Home+"\n" {
			t.Errorf("got %q (error %v)", text, res.IsError)
		}
		sc, _ := res.StructuredContent.(map[string]any)
		if sc["status"] != "ok" || sc["risk"] != "safe" || sc["exit_code"] != float64(0) || sc["session"] == "" {
			t.Errorf("structured content %v", sc)
		}
		if n := len(user.questions()); n != 0 {
			t.Errorf("a safe command asked %d questions", n)
		}
	})

	t.Run("medium approved and declined", func(t *testing.T) {
		setAnswer(true)
		text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "vub1", "command": "touch approved.txt"})
		if isErr {
			t.Fatalf("approved touch: %s", text)
		}
		if _, err := os.Stat(filepath.Join(srv1.Home, "approved.txt")); err != nil {
			t.Errorf("approved touch did not run: %v", err)
		}
		q := user.questions()
		if len(q) != 1 || !strings.Contains(q[0], "touch approved.txt") || !strings.Contains(q[0], "medium risk") {
			t.Errorf("questions %q: want one naming the command and its level", q)
		}
		setAnswer(false)
		text, isErr = call(t, ctx, cs, "execute_command", map[string]any{"host": "vub1", "command": "touch declined.txt"})
		if !isErr || !strings.Contains(text, "declined by the user") || !strings.Contains(text, "medium risk") {
			t.Errorf("declined touch: %q (error %v)", text, isErr)
		}
		if _, err := os.Stat(filepath.Join(srv1.Home, "declined.txt")); err == nil {
			t.Error("declined touch ran")
		}
		setAnswer(true)
	})

	t.Run("write then undo", func(t *testing.T) {
		old := filepath.Join(srv1.Home, "conf.txt")
		if err := os.WriteFile(old, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if text, isErr := call(t, ctx, cs, "write_file", map[string]any{"host": "vub1", "file_path": "conf.txt", "content": "new\n"}); isErr {
			t.Fatalf("write_file: %s", text)
		}
		if text, isErr := call(t, ctx, cs, "write_file", map[string]any{"host": "vub1", "file_path": "fresh.txt", "content": "x\n"}); isErr {
			t.Fatalf("write_file: %s", text)
		}
		if b, _ := os.ReadFile(old); string(b) != "new\n" {
			t.Fatalf("conf.txt: %q after write", b)
		}
		text, isErr := call(t, ctx, cs, "undo", map[string]any{"host": "vub1"})
		if isErr || !strings.Contains(text, "conf.txt") || !strings.Contains(text, "fresh.txt") {
			t.Errorf("undo: %q (error %v)", text, isErr)
		}
		if b, _ := os.ReadFile(old); string(b) != "old\n" {
			t.Errorf("conf.txt after undo: %q, want the old content", b)
		}
		if _, err := os.Stat(filepath.Join(srv1.Home, "fresh.txt")); err == nil {
			t.Error("fresh.txt still there after undo")
		}
		// Changes after the undo belong to a new session, and undo again.
		if text, isErr := call(t, ctx, cs, "write_file", map[string]any{"host": "vub1", "file_path": "conf.txt", "content": "newer\n"}); isErr {
			t.Fatalf("write_file after undo: %s", text)
		}
		if text, isErr := call(t, ctx, cs, "undo", map[string]any{"host": "vub1"}); isErr {
			t.Fatalf("second undo: %s", text)
		}
		if b, _ := os.ReadFile(old); string(b) != "old\n" {
			t.Errorf("conf.txt after the second undo: %q", b)
		}
	})

	t.Run("cancelled long command", func(t *testing.T) {
		// The marker is in the argv of the long-running process itself
		// (the command's text is in no argv: the host's shell reads it).
		marker := fmt.Sprintf("sleep 300.%09d", time.Now().UnixNano()%1e9)
		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		done := make(chan error, 1)
		go func() {
			// more output than a stream holds back (engine/stream.go: a
			// secret's shape over lines is matched whole) before the wait
			p := &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": "vub2", "command": "yes started | head -n 400; " + marker + "; echo done"}}
			p.SetProgressToken("long")
			_, err := cs.CallTool(cctx, p)
			done <- err
		}()
		deadline := time.Now().Add(20 * time.Second)
		for user.progressed() == 0 || len(processesWith(marker)) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no progress (%d) or no remote process (%v)", user.progressed(), processesWith(marker))
			}
			time.Sleep(50 * time.Millisecond)
		}
		for !strings.Contains(strings.Join(user.progressMessages(), "\n"), "output: started") {
			if time.Now().After(deadline) {
				t.Fatalf("no progress with the output: %q", user.progressMessages())
			}
			time.Sleep(50 * time.Millisecond)
		}
		ccancel()
		if err := <-done; err == nil {
			t.Error("cancelled call returned no error")
		}
		waitGone(t, marker)
		if text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "vub2", "command": "echo still"}); isErr || text != "still\n" {
			t.Errorf("after cancel: %q (error %v)", text, isErr)
		}
	})

	t.Run("20 concurrent calls to 4 hosts", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan string, 20)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				host := fmt.Sprintf("vub%d", i%4+1)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command",
					Arguments: map[string]any{"host": host, "command": fmt.Sprintf("sleep 0.3; echo call %d on $(basename $HOME)", i)}})
				switch {
				case err != nil:
					errs <- fmt.Sprintf("call %d: %v", i, err)
				case res.IsError || !strings.HasPrefix(resultText(res), fmt.Sprintf("call %d on ", i)):
					errs <- fmt.Sprintf("call %d on %s: %q", i, host, resultText(res))
				case !strings.Contains(resultText(res), filepath.Base(hosts[host].Home)):
					errs <- fmt.Sprintf("call %d ran on the wrong host: %q", i, resultText(res))
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	})

	t.Run("down host and bad input", func(t *testing.T) {
		for _, c := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"down host", map[string]any{"host": "down", "command": "true"}, "host down: connect"},
			{"unknown host", map[string]any{"host": "no-such-host.invalid", "command": "true"}, "no-such-host.invalid"},
			{"no host", map[string]any{"command": "true"}, `missing required parameter "host"`},
			{"host a number", map[string]any{"host": 7, "command": "true"}, `"host" must be a non-empty string`},
			{"timeout a word", map[string]any{"host": "vub1", "command": "true", "timeout": "soon"}, `parameter "timeout"`},
			{"command a list", map[string]any{"host": "vub1", "command": []any{"rm", "-rf", "/"}}, `parameter "command"`},
			{"unknown parameter", map[string]any{"host": "vub1", "command": "true", "condition": "False"}, `unknown parameter "condition"`},
			{"oversized", map[string]any{"host": "vub1", "command": "echo " + strings.Repeat("a", 2<<20)}, "the limit is 1048576"},
		} {
			text, isErr := call(t, ctx, cs, "execute_command", c.args)
			if !isErr || !strings.Contains(text, c.want) {
				t.Errorf("%s: %q (error %v), want a tool error with %q", c.name, text, isErr, c.want)
			}
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
			t.Errorf("unknown tool: %v", err)
		}
		if text, isErr := call(t, ctx, cs, "run_plan", map[string]any{"plan": 5, "hosts": "vub1"}); !isErr || !strings.Contains(text, "plan") {
			t.Errorf("run_plan with a number for a plan: %q", text)
		}
		if text, isErr := call(t, ctx, cs, "list_hosts", nil); !isErr || !strings.Contains(text, "no inventory") {
			t.Errorf("list_hosts without an inventory: %q", text)
		}
		if text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "vub1", "command": "echo serving"}); isErr || text != "serving\n" {
			t.Errorf("after bad input: %q (error %v)", text, isErr)
		}
	})

	t.Run("high refused without elicitation", func(t *testing.T) {
		victim := filepath.Join(srv1.Home, "keep")
		if err := os.MkdirAll(filepath.Join(victim, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		mute := &mcpClient{} // no elicitation support
		cs2 := connectStdio(t, ctx, env, mute)
		text, isErr := call(t, ctx, cs2, "execute_command", map[string]any{"host": "vub1", "command": "setfacl -R -m u:nobody:rwx keep"})
		if !isErr || !strings.Contains(text, "high risk") || !strings.Contains(text, "cannot ask its user") {
			t.Errorf("setfacl -R: %q (error %v), want a refusal naming the level and why", text, isErr)
		}
		if _, err := os.Stat(filepath.Join(victim, "sub")); err != nil {
			t.Errorf("the host changed: %v", err)
		}
	})
}
