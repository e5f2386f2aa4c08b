//go:build linux && (amd64 || arm64)

package confine

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkInstallFilter is what installing a safe step's filter costs
// a confined thread, against a filter of one instruction: the kernel
// emulates the program for every call number when it installs it, so the
// path a call no mode names takes is most of the cost (buildFilter's
// binary search).
func BenchmarkInstallFilter(b *testing.B) { benchInstall(b, seccompFilter(SyscallsRead, testUmask)) }

func BenchmarkInstallTrivial(b *testing.B) {
	benchInstall(b, []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: retAllow}})
}

func benchInstall(b *testing.B, f []unix.SockFilter) {
	var total time.Duration
	for i := 0; i < b.N; i++ {
		done := make(chan time.Duration)
		go func() {
			runtime.LockOSThread()
			start := time.Now()
			if err := installFilter(f); err != nil {
				b.Error(err)
			}
			done <- time.Since(start)
		}()
		total += <-done
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "install-us")
}
