package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// searchPlan searches the corpus, checks the answer, reads the file found
// and asks session_files for "this config".
const searchPlan = `name: search
steps:
  - tool: semantic_search
    parameters: {query: "max_connections database clients", path: "{{dir}}", top_k: 3}
    save_output_as: found
  - tool: check_condition
    parameters: {condition: "'postgresql.conf:1-' in found"}
  - tool: read_file
    parameters: {file_path: "{{dir}}/etc/postgresql/postgresql.conf"}
  - tool: session_files
    parameters: {action: get, reference: this, file_type: config}
    save_output_as: this_config
  - tool: semantic_search
    parameters: {query: "x", path: "{{this_config}}"}
`

// TestSearchEndToEnd drives semantic_search and session_files through the
// CLI on this machine and over real sshd: `agent run` of a plan (BM25:
// plans run without a model; a path that is not a directory fails its
// step), a plan with an empty query refused before anything runs, and
// `agent -c` with the scripted model calling both tools (embeddings from
// the scripted server; the secrets of the corpus never reach the model).
func TestSearchEndToEnd(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	home, srv := goldenEnv(t)
	t.Setenv("AGENT_EMBEDDING_MODEL", "nomic-embed-text")
	cfg := filepath.Join(home, "ssh_config")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("Host srch\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		d.Port, d.User, d.IdentityFile, d.KnownHosts)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(d.Home, "search-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.CopyFS(dir, os.DirFS("../../semsearch/testdata/corpus")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".env"), []byte("API_TOKEN=e2e-envsecret-55\nmax_connections\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "docs", "notes.md"), []byte("database clients notes\ndb_password = e2e-notesecret-77\n"), 0o644)
	plan := filepath.Join(home, "plan.yaml")
	os.WriteFile(plan, []byte(searchPlan), 0o644)
	pg := filepath.Join(dir, "etc/postgresql/postgresql.conf")

	for _, host := range []string{"", "srch"} {
		t.Run("host="+host, func(t *testing.T) {
			out, errOut, code := runAgent("-F", cfg, "--ssh-host="+host, "run", plan, "--var", "dir="+dir, "--json")
			steps := stepEvents(t, out)
			if code != 1 || len(steps) != 5 {
				t.Fatalf("exit %d, %d steps (want 1: the last fails)\n%s\n%s", code, len(steps), out, errOut)
			}
			for i, want := range []struct{ status, in string }{
				{"ok", "Ranked lexically (BM25), not by meaning: plans run without a model"},
				{"ok", "true"}, {"ok", "max_connections = 200"}, {"ok", pg}, {"error", "is not a directory"},
			} {
				if s := steps[i]; s["status"] != want.status || !strings.Contains(fmt.Sprint(s["output"]), want.in) || s["risk"] != nil && s["risk"] != "safe" {
					t.Errorf("step %d: %v %v, want %s with %q: %v", i+1, s["status"], s["risk"], want.status, want.in, s["output"])
				}
			}
			if o := fmt.Sprint(steps[0]["output"]); strings.Contains(o, "e2e-envsecret-55") || !strings.Contains(o, "protected by the safety policy") {
				t.Errorf("the protected .env was read or not named:\n%s", o)
			}

			// An empty query in a plan: refused with its line, nothing runs.
			bad := filepath.Join(t.TempDir(), "bad.yaml")
			os.WriteFile(bad, []byte(strings.Replace(searchPlan, `query: "x"`, `query: ""`, 1)), 0o644)
			if _, errOut, code := runAgent("-F", cfg, "--ssh-host="+host, "run", bad, "--var", "dir="+dir); code != 2 ||
				!strings.Contains(errOut, "bad.yaml:13: step 5 (semantic_search)") || !strings.Contains(errOut, "query is empty") {
				t.Errorf("empty query in a plan: exit %d: %s", code, errOut)
			}

			before := srv.EmbeddedInputs()
			srv.Push(
				testenv.Calls(testenv.Call("semantic_search", fmt.Sprintf(`{"query":"database clients","path":%q}`, dir))),
				testenv.Calls(testenv.Call("read_file", fmt.Sprintf(`{"file_path":%q}`, pg))),
				testenv.Calls(testenv.Call("session_files", `{"action":"list","reference":"this"}`)),
				testenv.Text("It is max_connections in postgresql.conf."),
			)
			n, nEmb := len(srv.Requests()), len(srv.EmbeddingRequests())
			tr := filepath.Join(t.TempDir(), "transcript.jsonl")
			out, errOut, code = runAgent("-F", cfg, "--ssh-host="+host, "--mode", "react", "--json", "--transcript", tr, "-c", "where is the database's client limit set?")
			steps = stepEvents(t, out)
			if code != 0 || len(steps) != 3 {
				t.Fatalf("agent -c: exit %d, steps %v\n%s", code, steps, errOut)
			}
			if o := fmt.Sprint(steps[0]["output"]); !strings.HasPrefix(o, "Ranked by embeddings (nomic-embed-text)") {
				t.Errorf("semantic_search under agent -c:\n%s", o)
			}
			if o := fmt.Sprint(steps[2]["output"]); !strings.Contains(o, "1. read "+pg) {
				t.Errorf("session_files: %s", o)
			}
			if srv.EmbeddedInputs() == before {
				t.Error("nothing was embedded")
			}
			for _, r := range srv.Requests()[n:] {
				if b := string(r.Body); strings.Contains(b, "e2e-notesecret-77") || strings.Contains(b, "e2e-envsecret-55") {
					t.Fatalf("a secret reached the model: %s", b)
				}
			}
			for _, r := range srv.EmbeddingRequests() {
				for _, in := range r.Inputs {
					if strings.Contains(in, "e2e-notesecret-77") || strings.Contains(in, "e2e-envsecret-55") {
						t.Fatalf("a secret reached the embeddings endpoint: %q", in)
					}
				}
			}
			// The transcript records the embeddings requests too, with
			// exactly the texts the server received.
			var sent [][]string
			for _, b := range transcriptBodies(t, tr, "embeddings") {
				var body struct{ Input []string }
				if err := json.Unmarshal(b, &body); err != nil {
					t.Fatalf("embeddings body %s: %v", b, err)
				}
				sent = append(sent, body.Input)
			}
			var got [][]string
			for _, r := range srv.EmbeddingRequests()[nEmb:] {
				got = append(got, r.Inputs)
			}
			if len(got) == 0 || !reflect.DeepEqual(sent, got) {
				t.Errorf("the transcript has %d embeddings requests, the server got %d, or their texts differ", len(sent), len(got))
			}
			srv.CheckNoRejections(t)
		})
	}
}
