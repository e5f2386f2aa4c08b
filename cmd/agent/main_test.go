package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/autoshell/agent/testenv"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agent": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar. Each script gets its own
// in-process SSH test host, reachable as "vub" through $HOME/.ssh/config;
// $REMOTE_HOME is that host's home directory. Each script also gets a
// scripted model at $AGENT_BASE_URL: `llm-script FILE` loads its replies,
// `llm-requests FILE` dumps what it received, and a request it rejected
// fails the script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sublines": sublines, "jsonlines": jsonlines, "llm-script": llmScript, "llm-requests": llmRequests,
		},
		Setup: func(env *testscript.Env) error {
			examples, err := filepath.Abs("../../examples")
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", examples)
			srv, err := testenv.NewSSHServer(testenv.SSHServerOptions{})
			if err != nil {
				return err
			}
			env.Defer(func() { srv.Close() })
			home := filepath.Join(env.WorkDir, "home")
			if err := srv.WriteOperatorHome(home, "vub"); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("SSH_AUTH_SOCK", "")
			// No terminal to ask for approvals, state kept in the script's
			// work directory.
			env.Setenv("CI", "true")
			// A race-enabled agent otherwise sleeps a second at every exit.
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
			env.Setenv("REMOTE_HOME", srv.Home)
			env.Setenv("REMOTE_USER", srv.User)
			env.Setenv("REMOTE_PORT", srv.Addr[len("127.0.0.1:"):])
			// task_*_ssh scripts reach their host with --ssh-host=$SSH_HOST and
			// see it named $TARGET (TestTaskScriptsLocal: "" and "local").
			env.Setenv("SSH_HOST", "vub")
			env.Setenv("TARGET", "vub")
			return startScriptLLM(env)
		},
	})
}

// sublines FILE1 FILE2 checks that every line of FILE1 is a line of FILE2
// (used to compare `agent ssh-config` with the superset `ssh -G` prints).
func sublines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sublines FILE1 FILE2")
	}
	have := map[string]bool{}
	for _, l := range strings.Split(ts.ReadFile(args[1]), "\n") {
		have[l] = true
	}
	var missing []string
	for _, l := range strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n") {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	if neg != (len(missing) == 0) {
		return
	}
	if neg {
		ts.Fatalf("every line of %s is in %s", args[0], args[1])
	}
	ts.Fatalf("lines of %s not in %s:\n%s", args[0], args[1], strings.Join(missing, "\n"))
}

// jsonlines FILE checks that FILE is one JSON object per line and nothing
// else (the --json contract).
func jsonlines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: jsonlines FILE")
	}
	text := ts.ReadFile(args[0])
	if text == "" || !strings.HasSuffix(text, "\n") {
		ts.Fatalf("%s: empty or not newline-terminated", args[0])
	}
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			ts.Fatalf("%s:%d: not a JSON object: %v\n%s", args[0], i+1, err, l)
		}
		if _, ok := m["event"].(string); !ok {
			ts.Fatalf("%s:%d: no event key: %s", args[0], i+1, l)
		}
	}
}
