// Package engine is what every front end (the CLI, the REPL, batch runs,
// later an MCP server) drives: it opens targets — this machine, an SSH
// alias, an inventory host — through one dialer registry keyed by
// ansible_connection; opens a host's session with the audit log, the undo
// journal and the approver wired into an executor; runs a task with the
// model (adaptive or ReAct) or a plan on one host; runs a batch over an
// inventory selection with forks, plan-once replay, shared approvals and
// per-host results; and undoes a session. It prints nothing and reads no
// flags: what happens is reported as events (package event), with secrets
// scrubbed, and as results.
package engine
