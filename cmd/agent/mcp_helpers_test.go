package main

// Helpers of the `agent mcp` tests: the real binary (the "agent" on PATH,
// placePlainAgent's) driven by the MCP SDK's client.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/testenv"
)

// mcpEnv is the environment of an `agent mcp` under test: HOME, state and
// config in the test's directory, no ssh-agent, no terminal.
func mcpEnv(t *testing.T, home string) []string {
	t.Helper()
	tmp := t.TempDir()
	env := []string{
		"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "XDG_CONFIG_HOME=" + filepath.Join(tmp, "config"),
		"SSH_AUTH_SOCK=", "CI=true", "PATH=" + os.Getenv("PATH"),
		raceEnv(),
	}
	if c := os.Getenv("GOCOVERDIR"); c != "" {
		env = append(env, "GOCOVERDIR="+c)
	}
	return env
}

// sshConfigFor writes an ssh_config naming each host by its alias, and
// "down" as a port nobody listens on.
func sshConfigFor(t *testing.T, dir string, hosts map[string]testenv.Host) string {
	t.Helper()
	var b strings.Builder
	for alias, h := range hosts {
		fmt.Fprintf(&b, "Host %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  ConnectTimeout 5\n\n",
			alias, h.Port, h.User, h.IdentityFile, h.KnownHosts)
	}
	fmt.Fprintf(&b, "Host down\n  HostName 127.0.0.1\n  Port %d\n  ConnectTimeout 5\n", closedPort(t))
	if err := os.MkdirAll(filepath.Join(dir, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".ssh", "config")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mcpClient is a client with the answers of its user: Answer decides each
// elicitation (nil: the client does not support elicitation).
type mcpClient struct {
	mu       sync.Mutex
	asked    []string // the questions' messages
	answer   func(msg string) *mcp.ElicitResult
	progress []string
}

func (c *mcpClient) options() *mcp.ClientOptions {
	o := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		c.mu.Lock()
		c.progress = append(c.progress, r.Params.Message)
		c.mu.Unlock()
	}}
	if c.answer != nil {
		o.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			c.mu.Lock()
			c.asked = append(c.asked, r.Params.Message)
			c.mu.Unlock()
			return c.answer(r.Params.Message), nil
		}
	}
	return o
}

func (c *mcpClient) questions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.asked...)
}

func (c *mcpClient) progressMessages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.progress...)
}

func (c *mcpClient) progressed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.progress)
}

// connectStdio starts `agent mcp ARGS…` and connects c to it over stdio.
func connectStdio(t *testing.T, ctx context.Context, env []string, c *mcpClient, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command("agent", append([]string{"mcp"}, args...)...)
	cmd.Env = env
	cmd.Stderr = &testWriter{t: t}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-test", Version: "1"}, c.options()).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to agent mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// startHTTP starts `agent mcp --http 127.0.0.1:0 ARGS…` and returns its
// endpoint.
func startHTTP(t *testing.T, env []string, args ...string) string {
	t.Helper()
	endpoint, _, _ := startMCPServer(t, env, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	return endpoint
}

// startMCPServer starts `agent mcp ARGS…` (with an --http address) and
// returns its endpoint, the lines it printed before serving, and the
// process.
func startMCPServer(t *testing.T, env []string, args ...string) (endpoint string, before []string, proc *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("agent", append([]string{"mcp"}, args...)...)
	cmd.Env = env
	// Killed with the test binary too (a test timeout skips Cleanup): an
	// orphaned server would hold whatever descriptors it inherited.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`serving (http\S+)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
					t.Log("agent mcp:", sc.Text())
				}
			}()
			return m[1], before, cmd
		}
		before = append(before, sc.Text())
		t.Log("agent mcp:", sc.Text())
	}
	t.Fatal("agent mcp --http exited before serving")
	return "", nil, nil
}

// bearer adds the token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects c to the endpoint with the token.
func connectHTTP(t *testing.T, ctx context.Context, endpoint, token string, c *mcpClient) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-test", Version: "1"}, c.options()).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and fails the test on a protocol error.
func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (text string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		a := fmt.Sprint(args)
		if len(a) > 200 {
			a = a[:200] + "…"
		}
		t.Fatalf("%s %s: %v", tool, a, err)
	}
	return resultText(res), res.IsError
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// processesWith lists the processes of this machine whose command line
// holds marker (the test hosts run their commands here).
func processesWith(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cl := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cl, marker) {
			out = append(out, e.Name()+": "+cl)
		}
	}
	return out
}

// waitGone waits until no process holds marker.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ps := processesWith(marker)
		if len(ps) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left after cancel:\n%s", strings.Join(ps, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testWriter logs what is written to it.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
