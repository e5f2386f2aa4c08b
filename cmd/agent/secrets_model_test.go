package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// secretFiles hold each kind of secret issue 14 §4 lists; secretValues are
// the values that must never reach the model, the transcript's request
// lines (which hold exactly what was sent) or the audit log.
var (
	secretFiles = map[string]string{
		"app.env": "DB_PASSWORD=Hunter2-dbpw\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCY\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n" +
			"STRIPE_KEY=rk_live_51Hstripe\nGITHUB_TOKEN=ghtok-0a1b2c3d\nremote=https://deploy:UrlPw-3321@git.example.com/app.git\n",
		"id_ed25519":  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----\n",
		"headers.txt": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload\nProxy-Authorization: Basic ZGVwbG95OnMzY3JldA==\n",
		"db.conf":     "host=db1\nuser=app\nconn_pass_ref InvVault-7781\n", // the inventory secret's value, under no secret-looking name
	}
	secretValues = []string{"Hunter2-dbpw", "wJalrXUtnFEMIK7MDENGbPxRfiCY", "AKIAIOSFODNN7EXAMPLE", "rk_live_51Hstripe",
		"ghtok-0a1b2c3d", "UrlPw-3321", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "eyJhbGciOiJIUzI1NiJ9", "ZGVwbG95OnMzY3JldA",
		"InvVault-7781", "InvTok-5531"}
	inventorySecrets = []string{"InvVault-7781", "InvTok-5531"}
)

// TestSecretsStayHome (issue 14 §4): a task whose steps read files holding
// each kind of secret, and print an inventory secret through a template,
// on a host over real sshd and on this machine (ansible_connection=local).
// From the scripted server's request bodies: no secret value arrived, the
// tool replies name what was withheld and say so; the transcript's request
// lines are byte for byte the bodies the server received; audit.log and
// the --out log hold no secret. --send-secrets sends the pattern secrets
// (never the inventory's).
func TestSecretsStayHome(t *testing.T) {
	f := newBatchFixture(t)
	for name, content := range secretFiles {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	inv := f.inventory("vault_db_password=InvVault-7781\napi_token=InvTok-5531\n\n[ctl]\nlo ansible_connection=local\n")
	script := func() []testenv.Reply {
		return []testenv.Reply{
			testenv.Calls(
				testenv.Call("submit_plan", args(map[string]any{"phases": []map[string]any{{"phase": 1, "goal": "look at the config"}}})),
				testenv.Call("read_file", args(map[string]any{"file_path": "{{dir}}/app.env"})),
				testenv.Call("execute_command", args(map[string]any{"command": "cat {{dir}}/id_ed25519 {{dir}}/headers.txt"})),
				testenv.Call("execute_command", args(map[string]any{"command": "cat {{dir}}/db.conf; echo token={{api_token}} v={{vault_db_password}}"}))),
			testenv.Calls(testenv.Call("phase_done", `{"summary":"looked"}`)),
		}
	}
	for _, tc := range []struct {
		host string
		send bool
	}{{"web01", false}, {"lo", false}, {"web01", true}} {
		name := tc.host
		if tc.send {
			name += "-send-secrets"
		}
		t.Run(name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			t.Setenv("XDG_STATE_HOME", state)
			srv := startBatchLLM(t, script()...)
			outDir := filepath.Join(t.TempDir(), "out")
			argv := []string{"-i", inv, "--limit", tc.host, "--approve", "all", "--out", outDir, "-c", "look at the app's config"}
			if tc.send {
				argv = append([]string{"--send-secrets"}, argv...)
			}
			out, errOut, code := f.agent(argv...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || srv.Remaining() != 0 {
				t.Fatalf("%d requests, %d replies left", len(reqs), srv.Remaining())
			}
			for i, r := range reqs {
				for _, v := range secretValues {
					inventory := strings.HasPrefix(v, "Inv")
					if got := bytes.Contains(r.Body, []byte(v)); got && (!tc.send || inventory) {
						t.Errorf("request %d holds %q", i+1, v)
					}
				}
			}
			replies := strings.Join(toolReplies(reqs[1]), "\n")
			if !tc.send {
				for _, want := range []string{"DB_PASSWORD=[REDACTED:DB_PASSWORD]", "AWS_SECRET_ACCESS_KEY=[REDACTED:AWS_SECRET_ACCESS_KEY]",
					"[REDACTED:AWS_ACCESS_KEY_ID]", "STRIPE_KEY=[REDACTED:STRIPE_KEY]", "GITHUB_TOKEN=[REDACTED:GITHUB_TOKEN]",
					"https://deploy:[REDACTED:URL_PASSWORD]@git.example.com", "[REDACTED:PRIVATE_KEY]",
					"Bearer [REDACTED:AUTHORIZATION]", "Basic [REDACTED:PROXY_AUTHORIZATION]",
					"conn_pass_ref [REDACTED:VAULT_DB_PASSWORD]", "token=[REDACTED:API_TOKEN] v=[REDACTED:VAULT_DB_PASSWORD]",
					"secret values withheld from you: DB_PASSWORD"} {
					if !strings.Contains(replies, want) {
						t.Errorf("tool replies lack %q:\n%s", want, replies)
					}
				}
			} else if !strings.Contains(replies, "Hunter2-dbpw") || !strings.Contains(replies, "[REDACTED:VAULT_DB_PASSWORD]") {
				t.Errorf("--send-secrets: tool replies\n%s", replies)
			}
			// the transcript's request lines are what the server received
			bodies := transcriptBodies(t, filepath.Join(outDir, tc.host+".transcript.jsonl"), "")
			if len(bodies) != len(reqs) {
				t.Fatalf("transcript holds %d request bodies, the server got %d", len(bodies), len(reqs))
			}
			for i := range reqs {
				if !bytes.Equal(bodies[i], reqs[i].Body) {
					t.Errorf("request %d: transcript body differs from what was sent:\n%s\n%s", i+1, bodies[i], reqs[i].Body)
				}
			}
			files := []string{filepath.Join(state, "agent", "audit.log"), filepath.Join(outDir, tc.host+".log")}
			for _, p := range files {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				secrets := inventorySecrets
				if !tc.send {
					secrets = secretValues
				}
				for _, v := range secrets {
					if bytes.Contains(b, []byte(v)) {
						t.Errorf("%s holds %q", filepath.Base(p), v)
					}
				}
			}
		})
	}
}

// toolReplies are the contents of a request's tool messages.
func toolReplies(r testenv.RecordedRequest) []string {
	var out []string
	for _, m := range r.Request.Messages {
		if m.Role == "tool" {
			out = append(out, m.Text())
		}
	}
	return out
}

// transcriptBodies are the "body" fields of a transcript's request lines
// to endpoint ("" for chat, "embeddings").
func transcriptBodies(t *testing.T, path, endpoint string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Event    string          `json:"event"`
			Endpoint string          `json:"endpoint"`
			Body     json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("transcript line %q: %v", sc.Bytes(), err)
		}
		if l.Event == "request" && l.Endpoint == endpoint {
			out = append(out, l.Body)
		}
	}
	return out
}
