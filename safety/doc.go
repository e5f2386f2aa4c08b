// Package safety decides what a step may do: it classifies shell commands
// from their mvdan.cc/sh syntax tree and file paths against one configurable
// Policy, asks for approval where the --approve mode requires it, appends
// every tool call to the audit log. (The undo journal is package journal.)
package safety
