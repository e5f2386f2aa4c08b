// Command agent-launch is the small static launcher agent sends to an SSH
// host for the session (package confine): it confines itself with Linux
// Landlock and a seccomp-bpf filter to what a step's level allows and
// execs the step's shell.
//
//	agent-launch -probe
//	agent-launch [-write] [-net] [-caps MODE] [-syscalls MODE] [-no-write P]... [-no-read P]... [-public P]... [-device P]... -- COMMAND...
package main

import (
	"os"

	"github.com/autoshell/agent/confine"
)

func main() {
	os.Exit(confine.Launch(os.Args[1:], os.Stdout, os.Stderr))
}
