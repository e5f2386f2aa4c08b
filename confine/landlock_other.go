//go:build !linux

package confine

import "errors"

// ABI is 0: Landlock is Linux's.
func ABI() int { return 0 }

func restrict(Spec) error { return errors.New("Landlock is Linux's; this system has none") }
