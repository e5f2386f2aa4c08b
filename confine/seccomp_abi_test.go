//go:build linux && (amd64 || arm64)

package confine

import (
	"runtime"
	"testing"
)

// kernelABI is each architecture's audit arch and a few call numbers as
// the kernel's own syscall tables give them (arch/x86/entry/syscalls/
// syscall_64.tbl; include/uapi/asm-generic/unistd.h for arm64), written
// here by hand so that the program is checked against the kernel's ABI,
// not against the constants it was built from. On amd64 this runs
// natively; `make test-arm64` runs the arm64 build under qemu-user.
var kernelABI = map[string]struct {
	arch                                                                      uint32
	read, socket, fchmodat, fchownat, utimensat, setxattr, ioprioSet, setprio uint32
	ioUringSetup, openat2                                                     uint32
}{
	"amd64": {0xC000003E, 0, 41, 268, 260, 280, 188, 251, 141, 425, 437},
	"arm64": {0xC00000B7, 63, 198, 53, 54, 88, 5, 30, 140, 425, 437},
}

// TestSeccompKernelABI: the build's program, fed the kernel's numbers,
// keeps a safe step off the network and off metadata and lets it read.
func TestSeccompKernelABI(t *testing.T) {
	abi, ok := kernelABI[runtime.GOARCH]
	if !ok {
		t.Skipf("no kernel ABI table for %s", runtime.GOARCH)
	}
	if auditArch != abi.arch {
		t.Fatalf("the program's audit arch is %#x, the kernel's for %s is %#x", uint32(auditArch), runtime.GOARCH, abi.arch)
	}
	const afInet, afUnix, other = 2, 1, 4242
	const allow, eperm, enosys, enotsup = 0x7fff0000, 0x50000 | 1, 0x50000 | 38, 0x50000 | 95
	for _, tc := range []struct {
		name      string
		nr        uint32
		args      [6]uint64
		read, own uint32
	}{
		{"read", abi.read, [6]uint64{0}, allow, allow},
		{"socket AF_UNIX", abi.socket, [6]uint64{afUnix, 1}, allow, allow},
		{"socket AF_INET UDP", abi.socket, [6]uint64{afInet, 2}, eperm, allow},
		{"fchmodat", abi.fchmodat, [6]uint64{0, 0, 0o644}, eperm, allow},
		{"fchmodat o+w", abi.fchmodat, [6]uint64{0, 0, 0o646}, eperm, eperm},
		{"fchownat", abi.fchownat, [6]uint64{}, eperm, allow},
		{"utimensat", abi.utimensat, [6]uint64{}, eperm, allow},
		{"setxattr", abi.setxattr, [6]uint64{}, eperm, enotsup},
		{"ioprio_set of another", abi.ioprioSet, [6]uint64{1, other, 3 << 13}, eperm, eperm},
		{"setpriority of another", abi.setprio, [6]uint64{0, other, 10}, eperm, eperm},
		{"io_uring_setup", abi.ioUringSetup, [6]uint64{1}, eperm, eperm},
		{"openat2", abi.openat2, [6]uint64{0, 0, 0, 24}, enosys, enosys},
	} {
		for _, mode := range []string{SyscallsRead, SyscallsOwn} {
			want := tc.own
			if mode == SyscallsRead {
				want = tc.read
			}
			if got := newSeccompVM(t, mode).run(t, abi.arch, tc.nr, tc.args); got != want {
				t.Errorf("%s on %s: %s (nr %d): returns %#x, want %#x", mode, runtime.GOARCH, tc.name, tc.nr, got, want)
			}
		}
	}
}
