//go:build !linux

package confine

import "time"

// Restrictor confines commands on Linux only.
type Restrictor struct{}

// NewRestrictor fails: Landlock is Linux's.
func NewRestrictor(...Ruleset) (*Restrictor, error) { return nil, errNoLandlock }

// NewRestrictors fails: Landlock is Linux's.
func NewRestrictors(...[]Ruleset) ([]*Restrictor, error) { return nil, errNoLandlock }

// Do fails.
func (r *Restrictor) Do(func()) error { return errNoLandlock }

// DoThen fails.
func (r *Restrictor) DoThen(func() bool) error { return errNoLandlock }

// WatchAll does nothing.
func (r *Restrictor) WatchAll() {}

// Reuse does nothing.
func (r *Restrictor) Reuse() {}

// Ahead fails.
func (r *Restrictor) Ahead(func()) (int, error) { return 0, errNoLandlock }

// Current fails.
func (r *Restrictor) Current(int) (bool, error) { return false, errNoLandlock }

// Rules has none.
func (r *Restrictor) Rules() (int, []Ruleset) { return 0, nil }

// Compiles has none.
func (r *Restrictor) Compiles() int { return 0 }

// Reused has none.
func (r *Restrictor) Reused() int { return 0 }

// KeepSpare does nothing.
func (r *Restrictor) KeepSpare() {}

// Close does nothing.
func (r *Restrictor) Close() error { return nil }

// GroupGone is false: no thread is reused here.
func GroupGone(int) bool { return false }

func threadID() int { return 0 }

func threadGone(int, time.Duration) bool { return true }
