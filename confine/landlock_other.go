//go:build !linux

package confine

import "errors"

// ABI is 0: Landlock is Linux's.
func ABI() int { return 0 }

func restrict(...Ruleset) error { return errNoLandlock }

var errNoLandlock = errors.New("Landlock is Linux's; this system has none")
