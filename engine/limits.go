package engine

import (
	"fmt"
	"syscall"
)

// fdsPerHost is how many file descriptors a host being worked on may hold
// at once: its SSH connection and SFTP session share a socket; a command
// run locally (ansible_connection=local) holds three pipes; the rest is
// headroom (a transcript, a --out log, the undo journal).
const (
	fdsPerHost = 8
	fdsReserve = 64
)

// openFileLimit raises the soft RLIMIT_NOFILE to the hard limit (the Go
// runtime does so at start on Linux, but not to the last descriptor in
// every setup) and returns it.
var openFileLimit = func() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, err
	}
	if r.Cur < r.Max {
		raised := syscall.Rlimit{Cur: r.Max, Max: r.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			r.Cur = r.Max
		}
	}
	return r.Cur, nil
}

// capForks returns how many hosts can be worked on at once under the
// open-file limit, and a warning when that is fewer than forks: a batch
// that would run out of file descriptors midway fails hosts for a reason
// that has nothing to do with them.
func capForks(forks int) (int, string) {
	limit, err := openFileLimit()
	if err != nil || limit == 0 {
		return forks, ""
	}
	most := 1
	if limit > fdsReserve+fdsPerHost {
		most = int(min((limit-fdsReserve)/fdsPerHost, uint64(1<<30)))
	}
	if forks <= most {
		return forks, ""
	}
	return most, fmt.Sprintf("--forks %d: the open-file limit (ulimit -n) is %d, enough for %d hosts at once; using --forks %d (raise the hard limit to run more)",
		forks, limit, most, most)
}
