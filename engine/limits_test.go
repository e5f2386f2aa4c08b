package engine

import (
	"strings"
	"syscall"
	"testing"
)

func TestCapForks(t *testing.T) {
	real := openFileLimit
	t.Cleanup(func() { openFileLimit = real })
	for _, tc := range []struct {
		limit      uint64
		forks, got int
		warn       bool
	}{
		{1 << 20, 200, 200, false},
		{1024, 200, 120, true},
		{1024, 100, 100, false},
		{10, 5, 1, true},
		{0, 50, 50, false}, // unknown: as asked
	} {
		openFileLimit = func() (uint64, error) { return tc.limit, nil }
		got, warn := capForks(tc.forks)
		if got != tc.got || (warn != "") != tc.warn {
			t.Errorf("limit %d, --forks %d: %d %q; want %d (warning %v)", tc.limit, tc.forks, got, warn, tc.got, tc.warn)
		}
		if warn != "" && !strings.Contains(warn, "ulimit -n") {
			t.Errorf("warning %q", warn)
		}
	}
}

// TestOpenFileLimitRaised: a low soft limit is raised to the hard one.
func TestOpenFileLimitRaised(t *testing.T) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r) })
	low := syscall.Rlimit{Cur: 256, Max: r.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	cur, err := openFileLimit()
	if err != nil || cur != r.Max {
		t.Fatalf("openFileLimit = %d, %v; want the hard limit %d", cur, err, r.Max)
	}
}
