package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClientMain is the test binary run as "agent-mcp-client ENDPOINT
// TOKENFILE HOST COMMAND": a real MCP client (the SDK's) that reads the
// bearer token from TOKENFILE when it can ("-": none), connects to
// ENDPOINT (http://… or unix:PATH), approves every question, and calls
// execute_command on HOST. It prints what happened at each stage and
// exits 0: the test judges by the outcome. Run as another user, it is
// the attacker of TestMCPOtherUser.
func mcpClientMain(args []string) int {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: agent-mcp-client ENDPOINT TOKENFILE HOST COMMAND")
		return 2
	}
	endpoint, tokenFile, host, command := args[0], args[1], args[2], args[3]
	var token string
	if tokenFile != "-" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			fmt.Println("token:", err)
		} else {
			token = strings.TrimSpace(string(b))
			fmt.Println("token: read")
		}
	}
	base := &http.Transport{}
	if path, ok := strings.CutPrefix(endpoint, "unix:"); ok {
		base.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}
		endpoint = "http://localhost/mcp"
	}
	var rt http.RoundTripper = base
	if token != "" {
		rt = bearerOver{token: token, base: base}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-mcp-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "always": true}}, nil
		},
	}).Connect(ctx, tr, nil)
	if err != nil {
		fmt.Println("connect:", err)
		return 0
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": host, "command": command}})
	if err != nil {
		fmt.Println("call:", err)
		return 0
	}
	fmt.Printf("result: error=%v %s\n", res.IsError, resultText(res))
	return 0
}

// bearerOver adds the token to every request of base.
type bearerOver struct {
	token string
	base  http.RoundTripper
}

func (b bearerOver) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}
