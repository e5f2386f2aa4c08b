package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestBatchInventorySecretsNotSentToModel: the inventory's become password
// is left out of what the model is shown and a secret-named variable shows
// as [REDACTED]; both still work in the model's templates.
func TestBatchInventorySecretsNotSentToModel(t *testing.T) {
	f := newBatchFixture(t)
	replies := []testenv.Reply{
		testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"task_type": "config", "complexity": "simple",
			"phases": []map[string]any{{"phase": 1, "goal": "store the credentials"}}}))),
		testenv.Calls(testenv.Call("execute_command", args(map[string]any{
			"command": "printf '%s %s\\n' '{{api_token}}' '{{ansible_become_password}}' > {{dir}}/{{inventory_hostname}}.sec"}))),
		testenv.Text("Stored."),
	}
	srv := startBatchLLM(t, replies...)
	inv := f.inventory("ansible_become_password=BecomeSecret99\napi_token=TokSecret55\n")
	out, errOut, code := f.agent("-i", inv, "--limit", "web01", "--approve", f.approve, "-c", "store the credentials")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	reqs := srv.Requests()
	if len(reqs) != len(replies) {
		t.Fatalf("%d requests, want %d", len(reqs), len(replies))
	}
	for i, r := range reqs {
		for _, s := range []string{"BecomeSecret99", "TokSecret55", "ansible_become_password ="} {
			if strings.Contains(string(r.Body), s) {
				t.Errorf("request %d holds %q", i+1, s)
			}
		}
	}
	if body := string(reqs[1].Body); !strings.Contains(body, "api_token = [REDACTED") || !strings.Contains(body, `role = \"frontend\"`) {
		t.Errorf("step request's variables:\n%s", body)
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "web01.sec"))
	if err != nil || string(b) != "TokSecret55 BecomeSecret99\n" {
		t.Errorf("templated file: %q (%v)", b, err)
	}
}

// secretPlan's command and output hold secrets: a mysql password, a
// secret-named assignment, and an inventory vault variable's value.
const secretPlan = `name: secrets
phases:
  - phase: 1
    goal: x
    steps:
      - tool: execute_command
        parameters:
          command: "echo mysql -pS3cretPW -e 'select 1'; echo DB_PASSWORD=hunter2xyz; echo {{vault_db_password}}; echo {{api_token}} >&2"
`

// TestBatchOutputRedactsSecrets: --out DIR/HOST.log and --json events hold
// no secret, neither one safety's patterns know nor the value of a
// secret-named inventory variable, wherever it shows (resolved command,
// output, error text).
func TestBatchOutputRedactsSecrets(t *testing.T) {
	f := newBatchFixture(t)
	plan := f.writeFile("s.yaml", secretPlan)
	inv := f.inventory("vault_db_password=InvSecret42\napi_token=12345678\n")
	secrets := []string{"S3cretPW", "hunter2xyz", "InvSecret42", "12345678"}
	outDir := filepath.Join(t.TempDir(), "out")
	out, errOut, code := f.agent("run", plan, "-i", inv, "--limit", "web01:web02", "--approve", "all", "--out", outDir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, name := range []string{"web01", "web02"} {
		b, err := os.ReadFile(filepath.Join(outDir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s.log holds %s:\n%s", name, s, b)
			}
		}
		if !strings.Contains(string(b), "DB_PASSWORD=[REDACTED]") || !strings.Contains(string(b), "echo [REDACTED]") {
			t.Errorf("%s.log:\n%s", name, b)
		}
	}
	jout, errOut, code := f.agent("run", plan, "-i", inv, "--limit", "web01", "--approve", "all", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d\n%s\n%s", code, jout, errOut)
	}
	steps := 0
	for _, line := range strings.Split(strings.TrimSpace(jout), "\n") {
		for _, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("--json holds %s: %s", s, line)
			}
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ev["event"] == "step" {
			steps++
			if p, _ := ev["parameters"].(map[string]any); !strings.Contains(fmt.Sprint(p["command"]), "echo [REDACTED]") {
				t.Errorf("step event: %s", line)
			}
		}
	}
	if steps != 1 {
		t.Errorf("%d step events:\n%s", steps, jout)
	}
}
