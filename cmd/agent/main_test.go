package main

import (
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
// $REMOTE_HOME is that host's home directory.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds:                map[string]func(ts *testscript.TestScript, neg bool, args []string){"sublines": sublines},
		Setup: func(env *testscript.Env) error {
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
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
			env.Setenv("REMOTE_HOME", srv.Home)
			env.Setenv("REMOTE_USER", srv.User)
			env.Setenv("REMOTE_PORT", srv.Addr[len("127.0.0.1:"):])
			return nil
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
