package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
)

// TestMCPResultsHideSecrets (issue 27): through agent mcp, a step that
// prints a file's secret without its name (jq -r), with its name changed
// (sed) or encoded (base64, rev) returns it hidden: the server's secret
// set learnt it from the file the step read.
func TestMCPResultsHideSecrets(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq not installed")
	}
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("SSH_AUTH_SOCK", "")
	dir := t.TempDir()
	const pw, tok = "McpDbPw-77120x", "McpNpmTok-3391z"
	for name, content := range map[string]string{
		"config.json": `{"host": "db1.example.com", "db_password": "` + pw + `"}` + "\n",
		".npmrc":      "//registry.example.com/:_authToken=" + tok + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host vub\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		srv.Port, srv.User, srv.IdentityFile, srv.KnownHosts)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Policy: safety.DefaultPolicy(), SSH: engine.SSHOverrides{ConfigFile: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs := inMemory(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []string{
		"jq -r .db_password " + dir + "/config.json", "sed 's/pass/p_a_s_s/' " + dir + "/config.json",
		"base64 " + dir + "/config.json", "rev " + dir + "/config.json", "sed 's/_authToken/x/' " + dir + "/.npmrc",
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": "vub", "command": c}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError || !strings.Contains(text, "REDACTED") {
			t.Errorf("%s: %q (error %v)", c, text, res.IsError)
		}
		flat := strings.Join(strings.Fields(text), "")
		for _, secret := range []string{pw, tok} {
			if strings.Contains(flat, secret[2:10]) || strings.Contains(flat, reverse(secret)[2:10]) {
				t.Errorf("%s: %q shows %s", c, text, secret)
			}
		}
		if strings.HasPrefix(c, "base64") {
			dec, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(strings.ReplaceAll(text, "\n", "")))
			if strings.Contains(string(dec), pw[2:10]) {
				t.Errorf("%s: decodes to %q", c, dec)
			}
		}
	}
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
