// Command agent hands a task in plain language to an LLM and carries it out,
// step by step and safely, on the local machine or on hosts reached over SSH.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
