package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/testenv"
)

// TestMCPHTTPSSHD drives `agent mcp --http` with the SDK's client against
// a real OpenSSH sshd reached as 10 inventory hosts: a missing or wrong
// bearer token is 401, list_hosts shows the inventory, run_plan runs a
// plan on the 10 hosts (one result each), a safe command, a high one
// approved through elicitation over HTTP and one refused for a client
// that cannot be asked (nothing changed), 20 concurrent calls to 4 hosts,
// a cancelled long command that leaves no process behind, a host that is
// down and oversized arguments — the server serving throughout.
func TestMCPHTTPSSHD(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "MaxStartups 200\nMaxSessions 50\n"})
	dir, err := os.MkdirTemp(d.Home, ".agent-mcp-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := t.TempDir()
	sshConfigFor(t, home, map[string]testenv.Host{"sshd": d.Host})
	var inv strings.Builder
	inv.WriteString("[web]\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&inv, "web%02d ansible_host=127.0.0.1 ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s db_password=hunter2secret\n",
			i, d.Port, d.User, d.IdentityFile)
	}
	inv.WriteString("[broken]\ndead ansible_host=down\n")
	invFile := filepath.Join(home, "hosts.ini")
	if err := os.WriteFile(invFile, []byte(inv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// known_hosts for 127.0.0.1:port comes from the ssh_config's Host *.
	cfg, _ := os.ReadFile(filepath.Join(home, ".ssh", "config"))
	cfg = append(cfg, fmt.Sprintf("\nHost *\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n", d.KnownHosts)...)
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "test-token-5d1f8a"
	env := append(mcpEnv(t, home), "AGENT_MCP_TOKEN="+token)
	endpoint := startHTTP(t, env, "-i", invFile, "--approve", "medium", "--forks", "4")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("401 without the token", func(t *testing.T) {
		for _, auth := range []string{"", "Bearer wrong", "Basic " + token} {
			req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("Authorization %q: %s, want 401 with WWW-Authenticate", auth, resp.Status)
			}
		}
		tr := &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}
		if _, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, tr, nil); err == nil {
			t.Error("a client without the token connected")
		}
		// The scheme in any case is served (RFC 7235); a foreign Origin
		// is refused even with the token.
		for _, tc := range []struct {
			auth, origin string
			want         int
		}{{"bearer " + token, "", 200}, {"Bearer " + token, "http://evil.example", 403}} {
			req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", tc.auth)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("Authorization %q Origin %q: %s, want %d", tc.auth[:6], tc.origin, resp.Status, tc.want)
			}
		}
	})

	approver := &mcpClient{answer: func(string) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	}}
	cs := connectHTTP(t, ctx, endpoint, token, approver)

	t.Run("list tools", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tl := range res.Tools {
			names[tl.Name] = true
		}
		for _, want := range []string{"execute_command", "read_file", "write_file", "edit_file", "check_condition", "find", "grep",
			"ps", "ss", "lsof", "sys_monitor", "upload_file", "download_file", "list_hosts", "run_plan", "undo"} {
			if !names[want] {
				t.Errorf("no tool %s among %v", want, names)
			}
		}
	})

	t.Run("write then undo", func(t *testing.T) {
		file := filepath.Join(dir, "app.conf")
		if err := os.WriteFile(file, []byte("port=80\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if text, isErr := call(t, ctx, cs, "edit_file", map[string]any{"host": "web07", "file_path": file, "search_pattern": "port=80", "replacement": "port=8080"}); isErr {
			t.Fatalf("edit_file: %s", text)
		}
		if b, _ := os.ReadFile(file); string(b) != "port=8080\n" {
			t.Fatalf("after edit: %q", b)
		}
		if text, isErr := call(t, ctx, cs, "undo", map[string]any{"host": "web07"}); isErr || !strings.Contains(text, "app.conf") {
			t.Errorf("undo: %q (error %v)", text, isErr)
		}
		if b, _ := os.ReadFile(file); string(b) != "port=80\n" {
			t.Errorf("after undo: %q", b)
		}
	})

	t.Run("list_hosts", func(t *testing.T) {
		text, isErr := call(t, ctx, cs, "list_hosts", map[string]any{"limit": "web"})
		var got struct {
			Hosts []struct {
				Name string
				Port int
				User string
				Vars map[string]any
			}
		}
		if isErr || json.Unmarshal([]byte(text), &got) != nil || len(got.Hosts) != 10 {
			t.Fatalf("list_hosts: %s", text)
		}
		if h := got.Hosts[0]; h.Name != "web01" || h.Port != d.Port || h.User != d.User {
			t.Errorf("first host %+v", h)
		}
		if strings.Contains(text, "hunter2secret") {
			t.Errorf("list_hosts shows a password: %s", text)
		}
	})

	t.Run("run_plan on 10 hosts", func(t *testing.T) {
		plan := fmt.Sprintf("name: name each host\nphases:\n  - phase: 1\n    goal: write\n    steps:\n"+
			"      - tool: execute_command\n        parameters:\n          command: \"echo {{inventory_hostname}} > %s/{{inventory_hostname}}.txt && cat %s/{{inventory_hostname}}.txt\"\n", dir, dir)
		text, isErr := call(t, ctx, cs, "run_plan", map[string]any{"plan": plan, "hosts": "web"})
		var got struct {
			Summary struct{ Hosts, OK int }
			Hosts   []struct {
				Host, Status string
				Steps        []struct{ Status, Output string } `json:"step_results"`
			}
		}
		if err := json.Unmarshal([]byte(text), &got); err != nil || isErr {
			t.Fatalf("run_plan (error %v): %v\n%s", isErr, err, text)
		}
		if got.Summary.Hosts != 10 || got.Summary.OK != 10 || len(got.Hosts) != 10 {
			t.Fatalf("summary %+v, %d results\n%s", got.Summary, len(got.Hosts), text)
		}
		for i, h := range got.Hosts {
			name := fmt.Sprintf("web%02d", i+1)
			if h.Host != name || h.Status != "ok" || len(h.Steps) != 1 || h.Steps[0].Output != name+"\n" {
				t.Errorf("host %d: %+v", i, h)
			}
			if b, err := os.ReadFile(filepath.Join(dir, name+".txt")); err != nil || string(b) != name+"\n" {
				t.Errorf("%s.txt: %q %v", name, b, err)
			}
		}
	})

	t.Run("safe and high commands", func(t *testing.T) {
		if text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "web03", "command": "echo hi from $(whoami)"}); isErr || text != "hi from "+d.User+"\n" {
			t.Errorf("safe command: %q (error %v)", text, isErr)
		}
		if err := os.MkdirAll(filepath.Join(dir, "doomed", "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "kept", "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "web01", "command": "rm -rf " + filepath.Join(dir, "doomed")})
		if isErr {
			t.Errorf("approved rm -rf: %s", text)
		}
		// (run_plan's writes under the sshd user's home, /root here, were
		// asked too: a system path.)
		if q := approver.questions(); len(q) == 0 || !strings.Contains(q[len(q)-1], "rm -rf") || !strings.Contains(q[len(q)-1], "high risk") {
			t.Errorf("questions %q", q)
		}
		if _, err := os.Stat(filepath.Join(dir, "doomed")); err == nil {
			t.Error("approved rm -rf did not run")
		}
		mute := connectHTTP(t, ctx, endpoint, token, &mcpClient{})
		text, isErr = call(t, ctx, mute, "execute_command", map[string]any{"host": "web01", "command": "rm -rf " + filepath.Join(dir, "kept")})
		if !isErr || !strings.Contains(text, "high risk") {
			t.Errorf("rm -rf without elicitation: %q (error %v)", text, isErr)
		}
		if _, err := os.Stat(filepath.Join(dir, "kept", "sub")); err != nil {
			t.Errorf("the host changed: %v", err)
		}
	})

	t.Run("20 concurrent calls to 4 hosts", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan string, 20)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				host := fmt.Sprintf("web%02d", i%4+1)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command",
					Arguments: map[string]any{"host": host, "command": fmt.Sprintf("sleep 0.3; echo call %d", i)}})
				switch {
				case err != nil:
					errs <- fmt.Sprintf("call %d: %v", i, err)
				case res.IsError || resultText(res) != fmt.Sprintf("call %d\n", i):
					errs <- fmt.Sprintf("call %d on %s: %q", i, host, resultText(res))
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
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
			_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "execute_command",
				Arguments: map[string]any{"host": "web05", "command": marker + "; echo done"}})
			done <- err
		}()
		deadline := time.Now().Add(20 * time.Second)
		for len(processesWith(marker)) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the long command never started")
			}
			time.Sleep(50 * time.Millisecond)
		}
		ccancel()
		if err := <-done; err == nil {
			t.Error("cancelled call returned no error")
		}
		waitGone(t, marker)
	})

	t.Run("down host and bad input", func(t *testing.T) {
		if text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "dead", "command": "true"}); !isErr || !strings.Contains(text, "host dead: connect") {
			t.Errorf("down host: %q (error %v)", text, isErr)
		}
		if text, isErr := call(t, ctx, cs, "read_file", map[string]any{"host": "web01", "file_path": strings.Repeat("x", 3<<19)}); !isErr || !strings.Contains(text, "the limit is") {
			t.Errorf("oversized: %.200q", text)
		}
		if text, isErr := call(t, ctx, cs, "run_plan", map[string]any{"plan": "phases: [", "hosts": "web"}); !isErr || !strings.Contains(text, "run_plan") {
			t.Errorf("bad plan: %q", text)
		}
		if text, isErr := call(t, ctx, cs, "execute_command", map[string]any{"host": "web02", "command": "echo serving"}); isErr || text != "serving\n" {
			t.Errorf("after bad input: %q (error %v)", text, isErr)
		}
		// A body past what the tool check reads is refused by HTTP (413);
		// the SDK's client then closes its session, the server serves on.
		big := connectHTTP(t, ctx, endpoint, token, &mcpClient{})
		if _, err := big.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"host": "web01", "file_path": strings.Repeat("x", 4<<20)}}); err == nil || !strings.Contains(err.Error(), "Too Large") {
			t.Errorf("a 4 MiB request: %.200v", err)
		}
		again := connectHTTP(t, ctx, endpoint, token, &mcpClient{})
		if text, isErr := call(t, ctx, again, "execute_command", map[string]any{"host": "web02", "command": "echo serving"}); isErr || text != "serving\n" {
			t.Errorf("after a 413: %q (error %v)", text, isErr)
		}
	})
}
