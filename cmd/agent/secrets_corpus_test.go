package main

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/testenv"
)

// A bigger model-path corpus than the table (issue 27): one-step
// scripts over more formats (YAML, TOML, .env, .netrc, git credentials
// and config, docker and kube configs) and more tools (yq, cut, python3
// -c, perl -e, base32, basenc, od, xxd -i, column, paste, split, env
// dumps, /proc/*/environ, grep -r), each secret named in its file only.
var (
	corpusFiles = map[string]string{
		"app.json":         "{\"db\": {\"host\": \"db3.example.com\", \"password\": \"JsonNestPw-77310q\"},\n \"api\": {\"url\": \"https://api.example.com\", \"token\": \"JsonApiTok-51aa09\"}}\n",
		"config.yaml":      "db:\n  host: db2.example.com\n  user: reporting\n  password: YamlDbPw-40417k\n",
		".env":             "APP_ENV=production\nDB_PASSWORD=EnvFilePw-22x81\nSTRIPE_SECRET_KEY=rkQz8Wv3Xp9921\n",
		"settings.toml":    "[server]\nport = 8080\n[auth]\napi_token = \"TomlTok-88fA21\"\n",
		".netrc":           "machine api.example.com login bot password NetrcPw-6620z\n",
		".git-credentials": "https://gituser:GitCredPw-3390@git.example.com\n",
		"gitconfig":        "[user]\n\tname = Ops Bot\n[http]\n\textraHeader = Authorization: Bearer GitHdrTok-5521ab\n",
		"docker.json":      "{\"auths\": {\"registry.example.com\": {\"auth\": \"" + base64.StdEncoding.EncodeToString([]byte("docker:DockerAuth-5519")) + "\"}}}\n",
		"kubeconfig":       "apiVersion: v1\nclusters:\n- name: prod\nusers:\n- name: admin\n  user:\n    token: KubeTok-eyJ0x9921\n",
		"proj/.env":        "SERVICE_URL=https://svc.example.com\nDB_PASSWORD=GrepRecPw-1123\n",
		"proj/README":      "a project\n",
	}
	corpusSecrets = []string{"JsonNestPw-77310q", "JsonApiTok-51aa09", "YamlDbPw-40417k", "EnvFilePw-22x81",
		"rkQz8Wv3Xp9921", "TomlTok-88fA21", "NetrcPw-6620z", "GitCredPw-3390", "GitHdrTok-5521ab",
		base64.StdEncoding.EncodeToString([]byte("docker:DockerAuth-5519")), "DockerAuth-5519", "KubeTok-eyJ0x9921", "GrepRecPw-1123",
		"ProcArgPw-8837", corpusEnvSecret}
	corpusCommands = []string{
		"jq -r .db.password {{dir}}/app.json",
		"jq -r '.. | strings' {{dir}}/app.json",
		"jq -r '.api | to_entries[] | .value' {{dir}}/app.json",
		"jq -r '.db.password | @base64' {{dir}}/app.json",
		"jq -r '.api.token | @uri' {{dir}}/app.json",
		"yq .db.password {{dir}}/config.yaml",
		"yq -o json {{dir}}/config.yaml",
		"awk '/password/{print $2}' {{dir}}/config.yaml",
		"awk -F= '{print $2}' {{dir}}/.env",
		"sed -n 's/.*password: //p' {{dir}}/config.yaml",
		"sed 's/=/ : /' {{dir}}/.env",
		"cut -d= -f2 {{dir}}/.env",
		"cut -d'\"' -f2 {{dir}}/settings.toml",
		"tr -d '\"' < {{dir}}/settings.toml",
		"python3 -c \"import json;print(json.load(open('{{dir}}/app.json'))['db']['password'])\"",
		"python3 -c \"import base64;print(base64.b64encode(open('{{dir}}/.env','rb').read()).decode())\"",
		"python3 -c \"print(open('{{dir}}/settings.toml').read()[::-1])\"",
		"perl -ne 'print if /KEY/' {{dir}}/.env",
		"perl -pe 's/password/pw/' {{dir}}/config.yaml",
		"perl -0777 -ne 'print unpack(\"H*\", $_)' {{dir}}/.env",
		"base32 {{dir}}/.env",
		"basenc --base64url {{dir}}/config.yaml",
		"basenc --base16 {{dir}}/settings.toml",
		"od -An -tx1 {{dir}}/.netrc",
		"od -x {{dir}}/config.yaml",
		"xxd -i {{dir}}/settings.toml",
		"xxd -p {{dir}}/.env | tr -d '\\n'",
		"hexdump -v -e '/1 \"%02x\"' {{dir}}/.netrc",
		"column -t -s= {{dir}}/.env",
		"paste -sd, {{dir}}/config.yaml",
		"split -b 4 --filter='cat; echo' {{dir}}/.env",
		"sed 's/./& /g' {{dir}}/settings.toml",
		"awk '{print $NF}' {{dir}}/.netrc",
		"cut -d' ' -f6 {{dir}}/.netrc",
		"cat {{dir}}/.git-credentials | base64",
		"tr ':@' '  ' < {{dir}}/.git-credentials",
		"git config --file {{dir}}/gitconfig --list",
		"git config --file {{dir}}/gitconfig --get http.extraheader | base64",
		"jq -r '.auths[].auth' {{dir}}/docker.json",
		"jq -r '.auths[].auth' {{dir}}/docker.json | rev",
		"jq -r '.auths[].auth' {{dir}}/docker.json | base64 -d",
		"awk '/token:/{print $2}' {{dir}}/kubeconfig | base64",
		"grep -A1 'user:' {{dir}}/kubeconfig | tail -1",
		"grep -r PASSWORD {{dir}}/proj",
		"grep -rh PASSWORD {{dir}}/proj | cut -d= -f2",
		"grep -rl a {{dir}}/proj",
		"ps -eo args | grep -- --password | base64",
		"ps -eo args | rev",
		"printenv | base64",
		"env | rev",
		"printenv CORPUS_API_TOKEN | xxd -p",
		"tr '\\0' '\\n' < /proc/$PPID/environ | base64",
		"cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a CORPUS_ | rev",
	}
	// corpusEnvSecret is in agent's own environment
	corpusEnvSecret = "EnvQv9Tkn-7781zW"
	// corpusWants is non-secret content the replies keep
	corpusWants = []string{"db3.example.com", "db2.example.com", "reporting", "production", "8080", "api.example.com", "Ops Bot", "README"}
)

func TestSecretCorpusStayHome(t *testing.T) {
	for _, tool := range []string{"jq", "yq", "xxd", "hexdump", "od", "rev", "base32", "basenc", "python3", "perl", "column", "paste", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, "not installed")
		}
	}
	t.Setenv("CORPUS_API_TOKEN", corpusEnvSecret)
	f := newBatchFixture(t)
	writeCorpus(t, f.dir)
	inv := f.inventory("\n[ctl]\nlo ansible_connection=local\n")
	// three calls a reply (agent's limit), seven replies a phase (under
	// its round limit)
	const perReply, perPhase = 3, 21
	script := func() []testenv.Reply {
		var phases []map[string]any
		for p := 0; p*perPhase < len(corpusCommands); p++ {
			phases = append(phases, map[string]any{"phase": p + 1, "goal": "look at the config"})
		}
		replies := []testenv.Reply{testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"phases": phases})))}
		for p := range phases {
			cmds := corpusCommands[p*perPhase : min((p+1)*perPhase, len(corpusCommands))]
			for i := 0; i < len(cmds); i += perReply {
				var calls []testenv.ToolCall
				for _, c := range cmds[i:min(i+perReply, len(cmds))] {
					calls = append(calls, testenv.Call("execute_command", args(map[string]any{"command": c})))
				}
				replies = append(replies, testenv.Calls(calls...))
			}
			replies = append(replies, testenv.Calls(testenv.Call("phase_done", `{"summary":"looked"}`)))
		}
		return replies
	}
	for _, host := range []string{"lo", "web01"} {
		t.Run(host, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			t.Setenv("XDG_STATE_HOME", state)
			srv := startBatchLLM(t, script()...)
			outDir := filepath.Join(t.TempDir(), "out")
			out, errOut, code := f.agent("-i", inv, "--limit", host, "--approve", "all", "--max-steps", "100", "--out", outDir, "-c", "look at the app's config")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			reqs := srv.Requests()
			if srv.Remaining() != 0 {
				t.Fatalf("%d requests, %d replies left", len(reqs), srv.Remaining())
			}
			var replies strings.Builder
			for i, r := range reqs {
				for _, s := range corpusSecrets {
					if how := shapeLeak(string(r.Body), s); how != "" {
						t.Errorf("request %d holds %q (%s)", i+1, s, how)
					}
				}
				for _, m := range toolReplies(r) {
					replies.WriteString(m + "\n")
				}
			}
			all := replies.String()
			if d := os.Getenv("DEBUG_CORPUS"); d != "" {
				os.WriteFile(filepath.Join(d, host+".replies"), []byte(all), 0o600)
			}
			for _, s := range corpusSecrets {
				if shapeLeak(all, s) == "" {
					continue
				}
				for _, reply := range strings.Split(all, "\n") {
					if how := shapeLeak(reply, s); how != "" {
						t.Logf("%q (%s) in: %.200q", s, how, reply)
					}
				}
			}
			for _, want := range corpusWants {
				if !strings.Contains(all, want) {
					t.Errorf("tool replies lack %q", want)
				}
			}
			for _, p := range []string{filepath.Join(state, "agent", "audit.log"), filepath.Join(outDir, host+".log"),
				filepath.Join(outDir, host+".transcript.jsonl")} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range corpusSecrets {
					if how := shapeLeak(string(b), s); how != "" {
						t.Errorf("%s holds %q (%s)", filepath.Base(p), s, how)
					}
				}
			}
		})
	}
}

// writeCorpus writes the corpus's files in dir and starts a process whose
// arguments hold a password, as ps shows it.
func writeCorpus(t *testing.T, dir string) {
	t.Helper()
	for name, content := range corpusFiles {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ps := exec.Command("/bin/sh", "-c", "read x", "--user=app", "--password=ProcArgPw-8837", "appdb")
	ps.Args[0], ps.Stdin = "psql", pr
	if err := ps.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close(); ps.Process.Kill(); ps.Wait(); pr.Close() })
}

// The same corpus through `agent mcp` (stdio, --approve all) on a host
// over sshd: no tool result and no audit line holds a secret in any
// shape, and the results keep their other content.
func TestSecretCorpusThroughMCP(t *testing.T) {
	for _, tool := range []string{"jq", "yq", "xxd", "hexdump", "base32", "basenc", "python3", "perl", "column", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, "not installed")
		}
	}
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	home := t.TempDir()
	sshConfigFor(t, home, map[string]testenv.Host{"vub": srv.Host})
	dir := t.TempDir()
	writeCorpus(t, dir)
	env := append(mcpEnv(t, home), "CORPUS_API_TOKEN="+corpusEnvSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := connectStdio(t, ctx, env, &mcpClient{}, "--approve", "all")
	var all strings.Builder
	for _, c := range corpusCommands {
		text, _ := call(t, ctx, cs, "execute_command", map[string]any{"host": "vub", "command": strings.ReplaceAll(c, "{{dir}}", dir)})
		for _, s := range corpusSecrets {
			if how := shapeLeak(text, s); how != "" {
				t.Errorf("%s: result holds %q (%s): %.300q", c, s, how, text)
			}
		}
		all.WriteString(text + "\n")
	}
	for _, want := range corpusWants {
		if !strings.Contains(all.String(), want) {
			t.Errorf("results lack %q", want)
		}
	}
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	b, err := os.ReadFile(filepath.Join(state, "agent", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range corpusSecrets {
		if how := shapeLeak(string(b), s); how != "" {
			t.Errorf("audit.log holds %q (%s)", s, how)
		}
	}
}
