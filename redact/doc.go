// Package redact owns secret redaction: the patterns that find secrets in
// free text (secret-named assignments, private keys, bearer and basic
// credentials, URL passwords, key shapes, passwords on command lines), the
// redaction of parameter maps, and the marks put in their place. Every
// place that writes what a run did — the model's requests, the transcript,
// the audit log, events and --json, --out logs, session files, MCP results
// — redacts through this package.
package redact
