package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeRangeCloexec is close_range(2)'s CLOSE_RANGE_CLOEXEC (Linux 5.11).
const closeRangeCloexec = 1 << 2

// keepInheritedFromSteps marks every descriptor agent inherited beyond
// stdin, stdout and stderr close-on-exec, so that no step (local, confined
// or not) and no launcher gets them: a pipe or file its parent leaked (an
// MCP client's, a CI runner's) would otherwise be open in every command,
// writable by a safe step. agent opens its own descriptors close-on-exec
// already (Go does), so this changes only what it was given.
func keepInheritedFromSteps() {
	if err := unix.CloseRange(3, ^uint(0), closeRangeCloexec); err == nil {
		return
	}
	// Before Linux 5.11: one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
