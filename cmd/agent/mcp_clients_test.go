package main

import (
	"context"
	"fmt"
	"net"
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

// cuttable is an HTTP client whose connections the test can cut at once,
// as a client that crashes or loses its network does.
type cuttable struct {
	mu    sync.Mutex
	conns []net.Conn
	token string
}

func (c *cuttable) client() *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.mu.Lock()
			c.conns = append(c.conns, conn)
			c.mu.Unlock()
		}
		return conn, err
	}}
	return &http.Client{Transport: bearerOver{token: c.token, base: tr}}
}

// cut closes every connection the client opened.
func (c *cuttable) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// connectCuttable connects a client whose connections cut() closes.
func connectCuttable(t *testing.T, ctx context.Context, endpoint, token string, c *mcpClient) (*mcp.ClientSession, *cuttable) {
	t.Helper()
	cu := &cuttable{token: token}
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: cu.client(), MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-test", Version: "1"}, c.options()).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cu
}

// TestMCPHTTPClients drives `agent mcp --http --approve ask` with several
// real clients on one OpenSSH sshd: an "always" client A gave does not
// approve the same step for client B (no elicitation: refused) nor for C
// (asked again); a client that disconnects with a question open does not
// delay another client's question by more than a second, and its step
// never runs; 20 clients that disconnect mid-call leave no process on
// the host, which still serves.
func TestMCPHTTPClients(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "MaxStartups 200\nMaxSessions 50\n"})
	dir, err := os.MkdirTemp(d.Home, ".agent-mcp-clients-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := t.TempDir()
	sshConfigFor(t, home, map[string]testenv.Host{"sshd": d.Host})
	const token = "test-token-clients-7c2e"
	endpoint := startHTTP(t, append(mcpEnv(t, home), "AGENT_MCP_TOKEN="+token), "--approve", "ask")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	yes := func(always bool) func(string) *mcp.ElicitResult {
		return func(string) *mcp.ElicitResult {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "always": always}}
		}
	}

	t.Run("always is per client", func(t *testing.T) {
		a := &mcpClient{answer: yes(true)}
		csA := connectHTTP(t, ctx, endpoint, token, a)
		file := filepath.Join(dir, "always.txt")
		cmd := "echo x >> " + file
		for i := range 2 {
			if text, isErr := call(t, ctx, csA, "execute_command", map[string]any{"host": "sshd", "command": cmd}); isErr {
				t.Fatalf("A's call %d: %s", i, text)
			}
		}
		if n := len(a.questions()); n != 1 {
			t.Errorf("A was asked %d times, want once (always)", n)
		}
		csB := connectHTTP(t, ctx, endpoint, token, &mcpClient{})
		text, isErr := call(t, ctx, csB, "execute_command", map[string]any{"host": "sshd", "command": cmd})
		if !isErr || !strings.Contains(text, "risk") {
			t.Errorf("B (no elicitation) ran A's always-approved step: %q", text)
		}
		c := &mcpClient{answer: func(string) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} }}
		csC := connectHTTP(t, ctx, endpoint, token, c)
		if text, isErr := call(t, ctx, csC, "execute_command", map[string]any{"host": "sshd", "command": cmd}); !isErr {
			t.Errorf("C's declined step ran: %q", text)
		}
		if n := len(c.questions()); n != 1 {
			t.Errorf("C was asked %d times, want once", n)
		}
		if b, _ := os.ReadFile(file); string(b) != "x\nx\n" {
			t.Errorf("file %q: want A's two lines only", b)
		}
	})

	t.Run("undo is per client", func(t *testing.T) {
		fa, fb := filepath.Join(dir, "undo-a.txt"), filepath.Join(dir, "undo-b.txt")
		for _, f := range []string{fa, fb} {
			if err := os.WriteFile(f, []byte("before\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		csA := connectHTTP(t, ctx, endpoint, token, &mcpClient{answer: yes(false)})
		csB := connectHTTP(t, ctx, endpoint, token, &mcpClient{answer: yes(false)})
		sessionOf := func(cs *mcp.ClientSession, file string) string {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"host": "sshd", "file_path": file, "content": "after\n"}})
			if err != nil || res.IsError {
				t.Fatalf("write_file %s: %v %s", file, err, resultText(res))
			}
			m, _ := res.StructuredContent.(map[string]any)
			id, _ := m["session"].(string)
			return id
		}
		sa, sb := sessionOf(csA, fa), sessionOf(csB, fb)
		if sa == "" || sa == sb {
			t.Fatalf("sessions %q and %q", sa, sb)
		}
		if text, isErr := call(t, ctx, csB, "undo", map[string]any{"host": "sshd", "session": sa}); !isErr || !strings.Contains(text, "not one of this client's") {
			t.Errorf("B undoing A's session: %q (error %v)", text, isErr)
		}
		if text, isErr := call(t, ctx, csB, "undo", map[string]any{"host": "sshd"}); isErr || !strings.Contains(text, "undo-b.txt") || strings.Contains(text, "undo-a.txt") {
			t.Errorf("B's undo: %q (error %v)", text, isErr)
		}
		for f, want := range map[string]string{fa: "after\n", fb: "before\n"} {
			if b, _ := os.ReadFile(f); string(b) != want {
				t.Errorf("%s: %q, want %q", filepath.Base(f), b, want)
			}
		}
	})

	t.Run("disconnect with a question open", func(t *testing.T) {
		asked := make(chan struct{}, 1)
		hold := make(chan struct{})
		defer close(hold)
		a := &mcpClient{answer: func(string) *mcp.ElicitResult {
			asked <- struct{}{}
			<-hold // the user never answers; the client goes away
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
		}}
		csA, cu := connectCuttable(t, ctx, endpoint, token, a)
		never := filepath.Join(dir, "never.txt")
		go csA.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": "sshd", "command": "echo a > " + never}})
		select {
		case <-asked:
		case <-time.After(30 * time.Second):
			t.Fatal("A was never asked")
		}
		cu.cut()
		bAsked := make(chan time.Time, 1)
		b := &mcpClient{answer: func(string) *mcp.ElicitResult {
			bAsked <- time.Now()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
		}}
		csB := connectHTTP(t, ctx, endpoint, token, b)
		start := time.Now()
		done := make(chan string, 1)
		go func() {
			text, _ := call(t, ctx, csB, "execute_command", map[string]any{"host": "sshd", "command": "echo b > " + filepath.Join(dir, "b.txt")})
			done <- text
		}()
		select {
		case at := <-bAsked:
			if w := at.Sub(start); w > time.Second {
				t.Errorf("B was asked after %v", w)
			}
		case <-time.After(time.Second):
			t.Fatal("B was not asked within a second of A's disconnect")
		}
		<-done
		if _, err := os.Stat(filepath.Join(dir, "b.txt")); err != nil {
			t.Errorf("B's approved step: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
		if _, err := os.Stat(never); err == nil {
			t.Error("the step of the client that left ran")
		}
	})

	t.Run("20 disconnects mid-call", func(t *testing.T) {
		marker := fmt.Sprintf("sleep 301.%07d", time.Now().UnixNano()%1e7)
		for i := range 20 {
			cs, cu := connectCuttable(t, ctx, endpoint, token, &mcpClient{})
			mine := fmt.Sprintf("%s%02d", marker, i)
			go cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": "sshd", "command": mine + "; echo done"}})
			deadline := time.Now().Add(20 * time.Second)
			for len(processesWith(mine)) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("call %d never started (host full?)", i)
				}
				time.Sleep(20 * time.Millisecond)
			}
			cu.cut()
		}
		waitGone(t, marker)
		cs := connectHTTP(t, ctx, endpoint, token, &mcpClient{})
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		if text, isErr := call(t, cctx, cs, "execute_command", map[string]any{"host": "sshd", "command": "echo still serving"}); isErr || text != "still serving\n" {
			t.Errorf("after 20 disconnects: %q (error %v)", text, isErr)
		}
	})
}
