// Package statedir owns where agent keeps its state on the operator's
// machine (Dir: the audit log, the sessions and their undo journals) and
// session ids: making them (NewSessionID) and accepting only those that
// name a directory under the sessions directory (CheckSessionID).
package statedir
