// Package dirnotify tells which entries of a few directories changed, by
// inotify, so that a confine.Restrictor's check before each confined
// command reads no directory whose entries it already knows: on a busy
// machine /tmp, listed by the rules whenever a protected path lies below
// it, changes between any two commands, and reading its hundreds of
// entries again at every step was most of a local confined step's cost
// (docs/bench.md). It is agent's alone: the launcher does not import it
// (its size is bounded), and a Watcher that cannot be made leaves the
// checks as they were.
package dirnotify

// Entry is an entry of a directory an event named since the last
// Changes. Away: an entry of that name was renamed out of the directory
// (what it named lives on elsewhere); else it was made, removed (unlinked)
// or renamed over or into it.
type Entry struct {
	Name string
	Away bool
}
