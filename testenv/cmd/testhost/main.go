// Command testhost starts an in-process SSH test host and a scripted
// OpenAI-compatible model, and runs a command against them, as an operator
// would: with a HOME whose ~/.ssh/config names the host "vub" and with
// AGENT_BASE_URL/AGENT_MODEL naming the model. It exits with the command's
// status — or 1 when the scripted model rejected a request agent sent, as a
// real API would have. `make demo` uses it.
//
//	testhost [-alias NAME] [-sshd] [-model-script FILE] -- COMMAND [ARG…]
//
// With -sshd the host is a real OpenSSH sshd on a loopback port instead.
// The model answers, in order, the replies of the embedded demo-model.json
// (the demo task: run ~/test/a.sh, and if it prints 1 make it print 2), or
// of FILE: a JSON array of {"content": TEXT, "tool_calls": [{"name": TOOL,
// "arguments": {…}}]}. It is scripted: it answers the same whatever it is
// sent, and agent checks and runs its steps for real.
//
// The command's environment has HOME set to that operator home (with
// XDG_CONFIG_HOME and XDG_STATE_HOME below it, so the operator's own
// configuration and state are left alone), AGENT_BASE_URL and AGENT_MODEL
// set and other model settings cleared, and TESTHOST_ALIAS, TESTHOST_ADDR
// and TESTHOST_REMOTE_HOME describing the host.
package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/autoshell/agent/testenv"
)

func main() {
	code, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testhost:", err)
	}
	os.Exit(code)
}

func run() (int, error) {
	alias := flag.String("alias", "vub", "the Host name in the operator's ~/.ssh/config")
	useSSHD := flag.Bool("sshd", false, "start a real OpenSSH sshd instead of the in-process server")
	modelScript := flag.String("model-script", "", "serve the replies of `FILE` instead of the demo's")
	flag.Parse()
	if flag.NArg() == 0 {
		return 2, errors.New("usage: testhost [-alias NAME] [-sshd] [-model-script FILE] -- COMMAND [ARG…]")
	}
	script := demoModel
	if *modelScript != "" {
		b, err := os.ReadFile(*modelScript)
		if err != nil {
			return 2, err
		}
		script = b
	}
	replies, err := parseModelScript(script)
	if err != nil {
		return 2, err
	}
	model, err := testenv.NewLLMServer(replies...)
	if err != nil {
		return 1, err
	}
	defer model.Close()
	var host testenv.Host
	if *useSSHD {
		d, err := testenv.NewSSHD(testenv.SSHDOptions{})
		if err != nil {
			return 1, err
		}
		defer d.Close()
		host = d.Host
	} else {
		srv, err := testenv.NewSSHServer(testenv.SSHServerOptions{})
		if err != nil {
			return 1, err
		}
		defer srv.Close()
		if err := seedRemoteHome(srv.Home); err != nil {
			return 1, err
		}
		host = srv.Host
	}
	home, err := os.MkdirTemp("", "agent-operator-home-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(home)
	if err := host.WriteOperatorHome(home, *alias); err != nil {
		return 1, err
	}

	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"AGENT_BASE_URL="+model.URL,
		"AGENT_MODEL="+scriptedModelName,
		"AGENT_PROVIDER=", "AGENT_API_KEY=", // the scripted model needs no key: none is sent
		"SSH_AUTH_SOCK=", // the demo must not depend on the operator's agent
		"TESTHOST_ALIAS="+*alias,
		"TESTHOST_ADDR="+host.Addr,
		"TESTHOST_REMOTE_HOME="+host.Home,
	)
	// The child decides what Ctrl-C and SIGTERM do; testhost cleans up after
	// it. The signals are caught and dropped, not ignored: an ignored signal
	// stays ignored in the child (and its children) across exec.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
		}
	}()
	err = cmd.Run()
	if rej := model.Rejections(); len(rej) > 0 {
		for _, r := range rej {
			msg := ""
			if r.Error != nil {
				msg = r.Error.Message
			}
			fmt.Fprintf(os.Stderr, "testhost: the scripted model rejected a request with %d, as a real API would: %s\n", r.Status, msg)
		}
		return 1, nil
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return max(ee.ExitCode(), 1), nil
		}
		return 1, err
	}
	return 0, nil
}

// scriptedModelName is AGENT_MODEL: what the scripted model calls itself.
const scriptedModelName = "scripted-demo-model"

// demoModel is the scripted model's replies for the demo task.
//
//go:embed demo-model.json
var demoModel []byte

// scriptReply is one reply of a model script.
type scriptReply struct {
	Content   string `json:"content"`
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_calls"`
}

// parseModelScript reads a model script: a JSON array of replies.
func parseModelScript(b []byte) ([]testenv.Reply, error) {
	var in []scriptReply
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("model script: %w", err)
	}
	if len(in) == 0 {
		return nil, errors.New("model script: no replies")
	}
	out := make([]testenv.Reply, 0, len(in))
	for i, r := range in {
		rep := testenv.Reply{Content: r.Content}
		for _, tc := range r.ToolCalls {
			if tc.Name == "" || len(tc.Arguments) == 0 || tc.Arguments[0] != '{' {
				return nil, fmt.Errorf("model script: reply %d: a tool call needs a name and an arguments object", i+1)
			}
			rep.ToolCalls = append(rep.ToolCalls, testenv.Call(tc.Name, string(tc.Arguments)))
		}
		if rep.Content == "" && len(rep.ToolCalls) == 0 {
			return nil, fmt.Errorf("model script: reply %d is empty", i+1)
		}
		out = append(out, rep)
	}
	return out, nil
}

// seedRemoteHome puts the adaptive-execution spec's example script on the host.
func seedRemoteHome(home string) error {
	dir := filepath.Join(home, "test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "a.sh"), []byte("#!/bin/sh\necho 1\n"), 0o755)
}
