// Command agent-launch is the small static launcher agent sends to an SSH
// host for the session (package confine): it confines itself with Linux
// Landlock to what a step's level allows and execs the step's shell.
//
//	agent-launch -probe
//	agent-launch [-write] [-net] [-no-write P]... [-no-read P]... [-public P]... [-device P]... -- COMMAND...
package main

import (
	"os"
	"runtime"

	"github.com/autoshell/agent/confine"
)

// The main goroutine keeps the main thread: a goroutine that confines a
// thread (-serve's commands) can then never run there, and the thread
// group's leader, which /proc/PID and signals to the process address,
// is never confined (Go would keep a confined main thread for the
// process's life).
func init() { runtime.LockOSThread() }

func main() {
	os.Exit(confine.Launch(os.Args[1:], os.Stdout, os.Stderr))
}
