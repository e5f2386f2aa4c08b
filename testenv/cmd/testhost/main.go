// Command testhost starts an in-process SSH test host and runs a command
// against it, as an operator would: with a HOME whose ~/.ssh/config names the
// host "vub". It exits with the command's status. `make demo` uses it.
//
//	testhost [-alias NAME] [-sshd] -- COMMAND [ARG…]
//
// With -sshd the host is a real OpenSSH sshd on a loopback port instead.
//
// The command's environment has HOME set to that operator home and
// TESTHOST_ALIAS, TESTHOST_ADDR and TESTHOST_REMOTE_HOME describing the host.
package main

import (
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
	flag.Parse()
	if flag.NArg() == 0 {
		return 2, errors.New("usage: testhost [-alias NAME] [-sshd] -- COMMAND [ARG…]")
	}
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
		"SSH_AUTH_SOCK=", // the demo must not depend on the operator's agent
		"TESTHOST_ALIAS="+*alias,
		"TESTHOST_ADDR="+host.Addr,
		"TESTHOST_REMOTE_HOME="+host.Home,
	)
	signal.Ignore(os.Interrupt, syscall.SIGTERM) // the child decides; we clean up after it
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return max(ee.ExitCode(), 1), nil
		}
		return 1, err
	}
	return 0, nil
}

// seedRemoteHome puts the adaptive-execution spec's example script on the host.
func seedRemoteHome(home string) error {
	dir := filepath.Join(home, "test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "a.sh"), []byte("#!/bin/sh\necho 1\n"), 0o755)
}
