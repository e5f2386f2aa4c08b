package main

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// The shapes of issue 27's table: a secret reaches the output without its
// key, with its key renamed, as a key file without its armour, in another
// process's arguments, encoded. Files hold the secrets under names only;
// the process holds one on its command line.
var (
	shapeFiles = map[string]string{
		"config.json": "{\n  \"host\": \"db1.example.com\",\n  \"db_password\": \"JqDbPw-5521xK\",\n  \"port\": 5432\n}\n",
		".npmrc":      "registry=https://registry.example.com/\n//registry.example.com/:_authToken=npmTok3nValue-8812\n",
		".my.cnf":     "[client]\nuser=reporting\npassword = MyCnf-Pw-66128\n",
		"key.pem": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n" +
			"MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----\n",
	}
	shapeSecrets = []string{"JqDbPw-5521xK", "npmTok3nValue-8812", "MyCnf-Pw-66128",
		"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
		"MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu", "PsPassw0rd-9931"}
	shapeCommands = []string{
		"jq -r .db_password {{dir}}/config.json", "awk -F'\"' '{print $4}' {{dir}}/config.json", "jq -c to_entries {{dir}}/config.json",
		"sed 's/pass/p_a_s_s/' {{dir}}/config.json", "sed 's/_authToken/x/' {{dir}}/.npmrc", "tr = ' ' < {{dir}}/.my.cnf",
		"grep -v BEGIN {{dir}}/key.pem", "sed -n 2p {{dir}}/key.pem", "ps -eo args",
		"base64 {{dir}}/config.json", "xxd -p {{dir}}/config.json", "hexdump -C {{dir}}/config.json",
		"od -c {{dir}}/config.json", "rev {{dir}}/config.json", "fold -w 3 {{dir}}/config.json",
		"base64 {{dir}}/.my.cnf", "xxd {{dir}}/.npmrc", "cat {{dir}}/config.json",
	}
)

// TestSecretShapesStayHome (issue 27): each one-step script of the
// issue's table, run unconfined (--approve all), on a host over real sshd and on
// this machine. No request body the scripted model received, no
// transcript line, audit line or --out log holds any of the secrets in
// clear, reversed, as hex or as base64 (any 6-byte window of it); the
// outputs keep their other content (db1.example.com, reporting).
func TestSecretShapesStayHome(t *testing.T) {
	for _, tool := range []string{"jq", "xxd", "hexdump", "od", "rev", "fold", "base64", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, "not installed")
		}
	}
	f := newBatchFixture(t)
	for name, content := range shapeFiles {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// another process with a password on its command line, as ps shows it
	// (a shell waiting on a pipe, named mysql: "mysql -c read x -uroot
	// -pPsPassw0rd-9931 appdb")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ps := exec.Command("/bin/sh", "-c", "read x", "-uroot", "-pPsPassw0rd-9931", "appdb")
	ps.Args[0], ps.Stdin = "mysql", pr
	if err := ps.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close(); ps.Process.Kill(); ps.Wait(); pr.Close() })
	inv := f.inventory("\n[ctl]\nlo ansible_connection=local\n")
	script := func() []testenv.Reply {
		replies := []testenv.Reply{testenv.Calls(
			testenv.Call("submit_plan", args(map[string]any{"phases": []map[string]any{{"phase": 1, "goal": "look at the config"}}})))}
		for i := 0; i < len(shapeCommands); i += 3 {
			var calls []testenv.ToolCall
			for _, c := range shapeCommands[i:min(i+3, len(shapeCommands))] {
				calls = append(calls, testenv.Call("execute_command", args(map[string]any{"command": c})))
			}
			replies = append(replies, testenv.Calls(calls...))
		}
		return append(replies, testenv.Calls(testenv.Call("phase_done", `{"summary":"looked"}`)))
	}
	for _, host := range []string{"web01", "lo"} {
		t.Run(host, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			t.Setenv("XDG_STATE_HOME", state)
			srv := startBatchLLM(t, script()...)
			outDir := filepath.Join(t.TempDir(), "out")
			// --approve all: the steps run unconfined, so that they really
			// read the files (a safe step is refused the home's secrets)
			out, errOut, code := f.agent("-i", inv, "--limit", host, "--approve", "all", "--out", outDir, "-c", "look at the app's config")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			reqs := srv.Requests()
			if srv.Remaining() != 0 {
				t.Fatalf("%d requests, %d replies left", len(reqs), srv.Remaining())
			}
			var replies strings.Builder
			for i, r := range reqs {
				for _, s := range shapeSecrets {
					if how := shapeLeak(string(r.Body), s); how != "" {
						t.Errorf("request %d holds %q (%s)", i+1, s, how)
						if os.Getenv("DEBUG_SHAPES") != "" {
							os.WriteFile("/tmp/shapes_body.json", r.Body, 0o600)
						}
					}
				}
				for _, m := range toolReplies(r) {
					replies.WriteString(m + "\n")
				}
			}
			all := replies.String()
			for _, s := range shapeSecrets {
				if how := shapeLeak(all, s); how != "" {
					t.Errorf("tool replies hold %q (%s)", s, how)
					for _, reply := range strings.Split(all, "\n") {
						if shapeLeak(reply, s) != "" {
							t.Logf("in: %.300q", reply)
						}
					}
				}
			}
			for _, want := range []string{"db1.example.com", "reporting", "[REDACTED:DB_PASSWORD]", "-p[REDACTED:PASSWORD] appdb"} {
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
				for _, s := range shapeSecrets {
					if how := shapeLeak(string(b), s); how != "" {
						t.Errorf("%s holds %q (%s)", filepath.Base(p), s, how)
					}
				}
			}
		})
	}
}

// shapeLeak says how text shows a 6-byte window of secret: in clear or
// reversed once white space (and JSON's escapes of it) is gone, as hex
// in either case, or as base64 or base32 at any alignment; "" when it
// does not.
func shapeLeak(text, secret string) string {
	text = strings.NewReplacer(`\n`, " ", `\t`, " ", `\"`, `"`, `\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(text)
	flat := strings.Join(strings.Fields(text), "")
	lowerFlat := strings.ToLower(flat)
	b64 := strings.NewReplacer("-", "+", "_", "/").Replace(flat)
	const w = 6
	// A window of hex digits alone ("5521ab" of GitHdrTok-5521ab) turns up
	// by chance in the audit log's hashes and the session ids: such a
	// window is left out where the secret has others.
	someNotHex := false
	for i := 0; i+w <= len(secret); i++ {
		someNotHex = someNotHex || !allHex(secret[i:i+w])
	}
	for i := 0; i+w <= len(secret); i++ {
		win := secret[i : i+w]
		if someNotHex && allHex(win) {
			continue
		}
		switch {
		case strings.Contains(flat, win):
			return "clear"
		case strings.Contains(flat, reverseString(win)):
			return "reversed"
		case strings.Contains(lowerFlat, hex.EncodeToString([]byte(win))):
			return "hex"
		}
		for k := range 3 {
			enc := base64.StdEncoding.EncodeToString(append(make([]byte, k), win...))
			inner := enc[(8*k+5)/6 : (8*(k+w))/6]
			if len(inner) >= 6 && strings.Contains(b64, inner) {
				return "base64"
			}
		}
		for k := range 5 {
			enc := base32.StdEncoding.EncodeToString(append(make([]byte, k), win...))
			inner := enc[(8*k+4)/5 : (8*(k+w))/5]
			if len(inner) >= 6 && strings.Contains(flat, inner) {
				return "base32"
			}
		}
	}
	return ""
}

func reverseString(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// agent's own secrets, from its environment, are in the run's set from
// the start: a step's output that shows one (here as base64 of a
// printenv-like listing) loses it in every shape.
func TestSecretSetHasEnvironment(t *testing.T) {
	t.Setenv("EXAMPLE_API_KEY", "EnvApiKeyValue-55102x")
	a := &app{}
	out := a.secretSet().String(base64.StdEncoding.EncodeToString([]byte("HOME=/home/u\nEXAMPLE_API_KEY=EnvApiKeyValue-55102x\nPATH=/bin\n")))
	if how := shapeLeak(out, "EnvApiKeyValue-55102x"); how != "" {
		t.Errorf("leaks (%s): %s", how, out)
	}
	if rev := a.secretSet().String(reverseString("EnvApiKeyValue-55102x")); strings.Contains(rev, "5501") {
		t.Errorf("reversed: %s", rev)
	}
}

// allHex reports whether s is hex digits alone.
func allHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
