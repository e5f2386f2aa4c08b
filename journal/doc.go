// Package journal is the undo journal: what a session changed on a host,
// kept before each change (a file's content, mode and owner, a created
// directory, a whole tree), and putting it back (Journal.RestoreWith)
// unless something changed it since. It lives in
// StateDir/sessions/ID/undo (package statedir); it knows nothing of
// policy — the executor decides what to journal.
package journal
