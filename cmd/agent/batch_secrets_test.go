package main

import (
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
	if body := string(reqs[1].Body); !strings.Contains(body, "api_token = [REDACTED]") || !strings.Contains(body, `role = \"frontend\"`) {
		t.Errorf("step request's variables:\n%s", body)
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "web01.sec"))
	if err != nil || string(b) != "TokSecret55 BecomeSecret99\n" {
		t.Errorf("templated file: %q (%v)", b, err)
	}
}
