// Command agent hands a task in plain language to an LLM and carries it out,
// step by step and safely, on the local machine or on hosts reached over SSH.
package main

import (
	"os"
	"runtime"

	"github.com/autoshell/agent/confine"
)

// The main goroutine keeps the main thread: the goroutines that confine a
// thread for a local step's command (confine.Restrictor) can then never
// run there, and the thread group's leader, which /proc/PID and signals
// to agent address, is never confined (Go would keep a confined main
// thread for the process's life, sharing a step's Landlock domain).
func init() { runtime.LockOSThread() }

func main() {
	// agent re-executes itself as the launcher that confines a local
	// step's command (package confine): that must happen before anything else.
	confine.MaybeLaunch()
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
