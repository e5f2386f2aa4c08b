// Package safety decides what a step may do: it classifies shell commands
// from their mvdan.cc/sh syntax tree and file paths against one configurable
// Policy, and asks for approval where the --approve mode requires it. (The
// audit log is package audit, the undo journal package journal, secret
// redaction package redact.)
package safety
