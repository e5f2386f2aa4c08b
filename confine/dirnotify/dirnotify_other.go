//go:build !linux

package dirnotify

import "errors"

// Watcher is Linux's (inotify); New fails elsewhere.
type Watcher struct{}

// New fails: inotify is Linux's.
func New() (*Watcher, error) { return nil, errors.New("dirnotify: no inotify on this system") }

// Changes reports every directory unknown.
func (w *Watcher) Changes(dirs []string) (map[string][]Entry, map[string]bool) {
	unknown := map[string]bool{}
	for _, p := range dirs {
		unknown[p] = true
	}
	return nil, unknown
}

// Len is 0: nothing is watched.
func (w *Watcher) Len() int { return 0 }

// Pending is always true: Changes knows nothing.
func (w *Watcher) Pending() bool { return true }

// Close does nothing.
func (w *Watcher) Close() error { return nil }
