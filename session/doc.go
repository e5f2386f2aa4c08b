// Package session keeps the record of a run as it goes, so that an
// interrupted one (Ctrl-C, a lost connection, kill -9 of agent itself, the
// model endpoint down) can be listed and resumed: one append-only file of
// JSON lines per session, StateDir()/sessions/ID/session.jsonl, beside the
// session's undo journal. Writers fsync at step boundaries; readers ignore
// a torn last line. What goes in has been through the engine's redaction.
package session
