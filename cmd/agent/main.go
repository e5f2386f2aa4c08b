// Command agent hands a task in plain language to an LLM and carries it out,
// step by step and safely, on the local machine or on hosts reached over SSH.
package main

import (
	"os"

	"github.com/autoshell/agent/confine"
)

func main() {
	// agent re-executes itself as the launcher that confines a local
	// step's command (package confine): that must happen before anything else.
	confine.MaybeLaunch()
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
