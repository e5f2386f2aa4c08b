// Package audit owns agent's audit log: one JSON line per step from every
// front end, appended, synced, and redacted of secrets.
package audit
