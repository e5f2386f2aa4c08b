package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/launchers"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/autoshell/agent/testenv"
)

func TestMain(m *testing.M) {
	quietRace()
	confine.MaybeLaunch()
	if b := filepath.Base(os.Args[0]); b != "agent" && b != "agent-mcp-client" { // not a script's command
		placeLauncher()
	}
	testscript.Main(plainAgentM{m}, map[string]func(){
		"agent":            func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"agent-mcp-client": func() { os.Exit(mcpClientMain(os.Args[1:])) },
	})
}

// plainAgentM runs the tests with the agent that testscript.Main put first
// on $PATH (the scripts', the completion's and the MCP tests' agent)
// replaced by agent built without -race, the launcher beside it
// (placePlainAgent; docs/decisions.md "The end-to-end tests' agent").
type plainAgentM struct{ m *testing.M }

func (p plainAgentM) Run() int {
	if err := placePlainAgent(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return p.m.Run()
}

// raceAgentEnv, set to 1, keeps this race-built test binary as the agent
// on $PATH (otherwise only agentBinary's is).
const raceAgentEnv = "AGENT_TEST_RACE_AGENT"

// placePlainAgent builds cmd/agent without -race over the agent in the
// first directory of $PATH, and copies the launcher beside it, when this
// test binary is race-built. A race-built agent takes about three times
// the CPU and up to five times the wall time of a plain one to start,
// run one step and exit, and the end-to-end tests start it thousands of
// times; the packages it runs keep the race detector in their own tests,
// in this package's in-process tests (Main) and in the tests that start
// agentBinary, this race-built binary. After make test's go vet, the
// build is a link.
func placePlainAgent() error {
	bindir := filepath.SplitList(os.Getenv("PATH"))[0]
	dst := filepath.Join(bindir, "agent")
	if !raceEnabled || os.Getenv(raceAgentEnv) == "1" {
		launcherBesideScripts()
		return nil
	}
	tmp := dst + ".plain"
	cmd := exec.Command("go", "build", "-o", tmp, "github.com/autoshell/agent/cmd/agent")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build agent without -race: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("build agent without -race: %w", err)
	}
	launcherBesideScripts()
	return nil
}

// quietRace sets GORACE's atexit_sleep_ms=0 in this process's
// environment, which every agent a test starts inherits (or is given with
// raceEnv): a race-built binary otherwise sleeps a second at each exit, and
// the end-to-end tests start this binary as agent thousands of times.
func quietRace() {
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms=") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
}

// raceEnv is the GORACE entry for an agent's environment built from
// scratch (quietRace).
func raceEnv() string { return "GORACE=" + os.Getenv("GORACE") }

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
			launcherBesideScripts()
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
			env.Setenv("GORACE", os.Getenv("GORACE"))
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

// placeLauncher puts agent-launch for this machine beside the test binary,
// where package launchers finds it when `make build` has not embedded one:
// the scripts' SSH hosts are then confined as a built agent confines them.
func placeLauncher() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	dst := filepath.Join(filepath.Dir(exe), launchers.Name(runtime.GOARCH))
	if _, err := os.Stat(dst); err == nil {
		return
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", dst, "github.com/autoshell/agent/cmd/agent-launch")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build agent-launch: %v\n%s", err, out)
		os.Exit(1)
	}
}

var launcherInPath sync.Once

// launcherBesideScripts copies the launcher placeLauncher built next to
// the copy of this binary testscript runs as agent (the first directory of
// $PATH it set up).
func launcherBesideScripts() {
	launcherInPath.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			return
		}
		name := launchers.Name(runtime.GOARCH)
		b, err := os.ReadFile(filepath.Join(filepath.Dir(exe), name))
		if err != nil {
			return
		}
		bindir := filepath.SplitList(os.Getenv("PATH"))[0]
		os.WriteFile(filepath.Join(bindir, name), b, 0o755)
	})
}
