//go:build linux && (amd64 || arm64)

package confine

import (
	"encoding/binary"
	"slices"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompVM runs mode's program in golang.org/x/net/bpf's interpreter,
// an implementation of classic BPF other than the kernel's and ours.
type seccompVM struct{ vm *bpf.VM }

func newSeccompVM(t testing.TB, mode string) seccompVM {
	t.Helper()
	f := seccompFilter(mode, testUmask)
	raw := make([]bpf.RawInstruction, len(f))
	for i, in := range f {
		raw[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	insts, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("%s: the program holds instructions bpf cannot decode", mode)
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
	return seccompVM{vm}
}

// run is the program's answer to a call: seccomp_data laid out with each
// 32-bit word big-endian, as the interpreter loads words.
func (v seccompVM) run(t testing.TB, arch, nr uint32, args [6]uint64) uint32 {
	t.Helper()
	var d [64]byte
	binary.BigEndian.PutUint32(d[offNr:], nr)
	binary.BigEndian.PutUint32(d[offArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(d[offArgLo(uint32(i)):], uint32(a))
		binary.BigEndian.PutUint32(d[offArgHi(uint32(i)):], uint32(a>>32))
	}
	r, err := v.vm.Run(d[:])
	if err != nil {
		t.Fatal(err)
	}
	return uint32(r)
}

// testUmask is the step's umask the programs under test are built for.
const testUmask = 0o022 | umaskOthers

// modelReturn is what mode answers, written from the lists and the
// documented rules without the assembler: the program must agree.
func modelReturn(mode string, arch, nr uint32, a [6]uint64) uint32 {
	if arch == auditArch && nr == unix.SYS_UMASK && uint32(a[0])&0o002 == 0 {
		return unix.SECCOMP_RET_ERRNO | (4096 - testUmask) // the step's mask, as umask's old value
	}
	if arch == auditArch && slices.Contains(absentCalls, nr) {
		return retENOSYS
	}
	if mode == SyscallsOwn && arch == auditArch && slices.Contains(xattrCalls, nr) {
		return retENOTSUP
	}
	if allowedByModel(mode, arch, nr, a) {
		return retAllow
	}
	return retEPERM
}

// allowedByModel: modelReturn's allow or EPERM.
func allowedByModel(mode string, arch, nr uint32, a [6]uint64) bool {
	lo := func(i int) uint32 { return uint32(a[i]) }
	if arch != auditArch || x32Bit != 0 && nr >= x32Bit {
		return false
	}
	read := mode == SyscallsRead
	switch {
	case slices.Contains(othersCalls, nr):
		return false
	case read && slices.Contains(metadataCalls, nr):
		return false
	case slices.Contains(selfOnlyCalls, nr):
		return lo(0) == 0
	}
	if !read {
		for _, c := range setidCalls {
			if c.nr == nr && (c.flags < 0 || lo(c.flags)&createFlags != 0) {
				return lo(c.mode)&c.bits == 0
			}
		}
	}
	switch nr {
	case unix.SYS_SETPRIORITY:
		return lo(0) == prioProcess && lo(1) == 0
	case unix.SYS_IOPRIO_SET:
		return lo(0) == ioprioWhoProcess && lo(1) == 0
	case unix.SYS_PRLIMIT64:
		return lo(0) == 0 || a[2] == 0
	case unix.SYS_IOCTL:
		return !slices.Contains(ioctlTerminal, lo(1)) && !(read && slices.Contains(ioctlMetadata, lo(1)))
	case unix.SYS_SOCKET:
		return !read || lo(0) == afUnix || lo(0) == afNetlink && (lo(2) == netlinkRoute || lo(2) == netlinkSockDiag)
	case unix.SYS_SOCKETPAIR:
		return !read || lo(0) == afUnix
	}
	return true
}

// TestSeccompFilters: each mode's program answers the calls a step
// makes as the level says — named one by one here, not from the lists
// the program is built from — and only ever allows or denies with EPERM.
func TestSeccompFilters(t *testing.T) {
	const other = 4242 // another process
	type call struct {
		name string
		nr   uint32
		args [6]uint64
	}
	arch := uint32(auditArch)
	shared := []struct {
		c         call
		read, own bool // allowed by SyscallsRead, SyscallsOwn
	}{
		{call{"read", unix.SYS_READ, [6]uint64{0}}, true, true},
		{call{"openat", unix.SYS_OPENAT, [6]uint64{}}, true, true},
		{call{"socket AF_UNIX", unix.SYS_SOCKET, [6]uint64{unix.AF_UNIX, unix.SOCK_STREAM}}, true, true},
		{call{"socket netlink sock_diag (ss)", unix.SYS_SOCKET, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG}}, true, true},
		{call{"socket netlink route (ip)", unix.SYS_SOCKET, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}}, true, true},
		{call{"socket netlink audit", unix.SYS_SOCKET, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT}}, false, true},
		{call{"socket netlink uevent", unix.SYS_SOCKET, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_KOBJECT_UEVENT}}, false, true},
		{call{"socket AF_INET UDP", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, unix.SOCK_DGRAM}}, false, true},
		{call{"socket AF_INET6", unix.SYS_SOCKET, [6]uint64{unix.AF_INET6, unix.SOCK_STREAM}}, false, true},
		{call{"socket AF_PACKET", unix.SYS_SOCKET, [6]uint64{unix.AF_PACKET, unix.SOCK_RAW}}, false, true},
		{call{"socket AF_UNIX in the high half", unix.SYS_SOCKET, [6]uint64{1<<32 | unix.AF_INET, unix.SOCK_DGRAM}}, false, true},
		{call{"socketpair AF_UNIX", unix.SYS_SOCKETPAIR, [6]uint64{unix.AF_UNIX}}, true, true},
		{call{"socketpair AF_INET", unix.SYS_SOCKETPAIR, [6]uint64{unix.AF_INET}}, false, true},
		{call{"fchmodat", unix.SYS_FCHMODAT, [6]uint64{}}, false, true},
		{call{"fchmodat2", unix.SYS_FCHMODAT2, [6]uint64{}}, false, true},
		{call{"fchmod", unix.SYS_FCHMOD, [6]uint64{}}, false, true},
		{call{"fchownat", unix.SYS_FCHOWNAT, [6]uint64{}}, false, true},
		{call{"fchown", unix.SYS_FCHOWN, [6]uint64{}}, false, true},
		{call{"utimensat (touch -d)", unix.SYS_UTIMENSAT, [6]uint64{}}, false, true},
		{call{"getxattr", unix.SYS_GETXATTR, [6]uint64{}}, true, true},
		{call{"ioctl FS_IOC_SETFLAGS (chattr)", unix.SYS_IOCTL, [6]uint64{3, unix.FS_IOC_SETFLAGS}}, false, true},
		{call{"ioctl FS_IOC_GETFLAGS (lsattr)", unix.SYS_IOCTL, [6]uint64{3, unix.FS_IOC_GETFLAGS}}, true, true},
		{call{"ioctl TIOCSTI", unix.SYS_IOCTL, [6]uint64{0, unix.TIOCSTI}}, false, false},
		{call{"ioctl TIOCSTI in the high half", unix.SYS_IOCTL, [6]uint64{0, 1<<32 | unix.TIOCSTI}}, false, false},
		{call{"ioctl TCGETS", unix.SYS_IOCTL, [6]uint64{0, unix.TCGETS}}, true, true},
		{call{"io_uring_setup", unix.SYS_IO_URING_SETUP, [6]uint64{}}, false, false},
		{call{"io_uring_enter", unix.SYS_IO_URING_ENTER, [6]uint64{}}, false, false},
		{call{"io_uring_register", unix.SYS_IO_URING_REGISTER, [6]uint64{}}, false, false},
		{call{"fchmodat 0644", unix.SYS_FCHMODAT, [6]uint64{3, 0, 0o644}}, false, true},
		{call{"fchmodat 0775 (g+w)", unix.SYS_FCHMODAT, [6]uint64{3, 0, 0o775}}, false, true},
		{call{"fchmodat 0777", unix.SYS_FCHMODAT, [6]uint64{3, 0, 0o777}}, false, false},
		{call{"fchmodat 01777", unix.SYS_FCHMODAT, [6]uint64{3, 0, 0o1777}}, false, false},
		{call{"fchmodat2 0002", unix.SYS_FCHMODAT2, [6]uint64{3, 0, 0o002}}, false, false},
		{call{"fchmod 0666", unix.SYS_FCHMOD, [6]uint64{3, 0o666}}, false, false},
		{call{"fchmod 04755", unix.SYS_FCHMOD, [6]uint64{3, 0o4755}}, false, false},
		{call{"fchmod 0755", unix.SYS_FCHMOD, [6]uint64{3, 0o755}}, false, true},
		{call{"openat O_CREAT 0666 (the umask's)", unix.SYS_OPENAT, [6]uint64{3, 0, unix.O_CREAT | unix.O_WRONLY, 0o666}}, true, true},
		{call{"openat O_CREAT 04755", unix.SYS_OPENAT, [6]uint64{3, 0, unix.O_CREAT | unix.O_WRONLY, 0o4755}}, true, false},
		{call{"openat O_RDONLY, mode 04755 unused", unix.SYS_OPENAT, [6]uint64{3, 0, unix.O_RDONLY, 0o4755}}, true, true},
		{call{"mkdirat 0777 (the umask's)", unix.SYS_MKDIRAT, [6]uint64{3, 0, 0o777}}, true, true},
		{call{"mknodat S_IFREG 0666", unix.SYS_MKNODAT, [6]uint64{3, 0, unix.S_IFREG | 0o666}}, true, true},
		{call{"nice: setpriority of itself", unix.SYS_SETPRIORITY, [6]uint64{unix.PRIO_PROCESS, 0, 10}}, true, true},
		{call{"renice: setpriority of another", unix.SYS_SETPRIORITY, [6]uint64{unix.PRIO_PROCESS, other, 10}}, false, false},
		{call{"renice -u: setpriority of the user's", unix.SYS_SETPRIORITY, [6]uint64{unix.PRIO_USER, 0, 10}}, false, false},
		{call{"renice -g: setpriority of the group", unix.SYS_SETPRIORITY, [6]uint64{unix.PRIO_PGRP, 0, 10}}, false, false},
		{call{"ionice: ioprio_set of itself", unix.SYS_IOPRIO_SET, [6]uint64{1, 0, 3 << 13}}, true, true},
		{call{"ionice -p: ioprio_set of another", unix.SYS_IOPRIO_SET, [6]uint64{1, other, 3 << 13}}, false, false},
		{call{"ionice -u: ioprio_set of the user's", unix.SYS_IOPRIO_SET, [6]uint64{3, 0, 3 << 13}}, false, false},
		{call{"ionice -P: ioprio_set of the group", unix.SYS_IOPRIO_SET, [6]uint64{2, 0, 3 << 13}}, false, false},
		{call{"taskset: sched_setaffinity of itself", unix.SYS_SCHED_SETAFFINITY, [6]uint64{0}}, true, true},
		{call{"taskset -p: sched_setaffinity of another", unix.SYS_SCHED_SETAFFINITY, [6]uint64{other}}, false, false},
		{call{"chrt -p: sched_setscheduler of another", unix.SYS_SCHED_SETSCHEDULER, [6]uint64{other}}, false, false},
		{call{"sched_setparam of another", unix.SYS_SCHED_SETPARAM, [6]uint64{other}}, false, false},
		{call{"sched_setattr of another", unix.SYS_SCHED_SETATTR, [6]uint64{other}}, false, false},
		{call{"sched_setattr of itself", unix.SYS_SCHED_SETATTR, [6]uint64{0}}, true, true},
		{call{"migrate_pages of another", unix.SYS_MIGRATE_PAGES, [6]uint64{other}}, false, false},
		{call{"move_pages of another", unix.SYS_MOVE_PAGES, [6]uint64{other}}, false, false},
		{call{"prlimit of another, setting", unix.SYS_PRLIMIT64, [6]uint64{other, unix.RLIMIT_NOFILE, 0x7fff0000}}, false, false},
		{call{"prlimit of another, a pointer in the high half", unix.SYS_PRLIMIT64, [6]uint64{other, unix.RLIMIT_NOFILE, 0x7f << 32}}, false, false},
		{call{"prlimit of another, reading", unix.SYS_PRLIMIT64, [6]uint64{other, unix.RLIMIT_NOFILE, 0, 0x7fff0000}}, true, true},
		{call{"prlimit of itself, setting", unix.SYS_PRLIMIT64, [6]uint64{0, unix.RLIMIT_NOFILE, 0x7fff0000}}, true, true},
		{call{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV, [6]uint64{other}}, false, false},
		{call{"process_vm_readv", unix.SYS_PROCESS_VM_READV, [6]uint64{other}}, false, false},
		{call{"process_madvise", unix.SYS_PROCESS_MADVISE, [6]uint64{}}, false, false},
		{call{"keyctl", unix.SYS_KEYCTL, [6]uint64{}}, false, false},
		{call{"add_key", unix.SYS_ADD_KEY, [6]uint64{}}, false, false},
		{call{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT, [6]uint64{}}, false, false},
		{call{"kill", unix.SYS_KILL, [6]uint64{other}}, true, true},
		{call{"exit_group", unix.SYS_EXIT_GROUP, [6]uint64{}}, true, true},
	}
	for _, mode := range []string{SyscallsRead, SyscallsOwn} {
		vm := newSeccompVM(t, mode)
		for _, tc := range shared {
			want := tc.own
			if mode == SyscallsRead {
				want = tc.read
			}
			got := vm.run(t, arch, tc.c.nr, tc.c.args)
			if wantRet := map[bool]uint32{true: retAllow, false: retEPERM}[want]; got != wantRet {
				t.Errorf("%s: %s: returns %#x, want %#x", mode, tc.c.name, got, wantRet)
			}
			if model := modelReturn(mode, arch, tc.c.nr, tc.c.args); model != got {
				t.Errorf("%s: %s: the model says %#x, the program %#x", mode, tc.c.name, model, got)
			}
		}
		// Extended attributes set or removed (setfacl, setfattr, cp -a):
		// EPERM when safe; "not supported" at medium, as a file system
		// without them answers.
		for _, c := range []call{{"setxattr", unix.SYS_SETXATTR, [6]uint64{}}, {"lsetxattr", unix.SYS_LSETXATTR, [6]uint64{}},
			{"fsetxattr", unix.SYS_FSETXATTR, [6]uint64{}}, {"setxattrat", unix.SYS_SETXATTRAT, [6]uint64{}},
			{"removexattr", unix.SYS_REMOVEXATTR, [6]uint64{}}, {"lremovexattr", unix.SYS_LREMOVEXATTR, [6]uint64{}},
			{"fremovexattr", unix.SYS_FREMOVEXATTR, [6]uint64{}}, {"removexattrat", unix.SYS_REMOVEXATTRAT, [6]uint64{}}} {
			want := map[string]uint32{SyscallsRead: retEPERM, SyscallsOwn: retENOTSUP}[mode]
			if got := vm.run(t, arch, c.nr, c.args); got != want || modelReturn(mode, arch, c.nr, c.args) != want {
				t.Errorf("%s: %s: returns %#x (model %#x), want %#x", mode, c.name, got, modelReturn(mode, arch, c.nr, c.args), want)
			}
		}
		// umask: a mask that lets others write is refused in both modes,
		// answered with the step's mask as the old value (the call's
		// return, mask-4096); one that keeps them out is allowed.
		for _, c := range []struct {
			mask uint64
			ok   bool
		}{{0, false}, {0o020, false}, {0o775, false}, {0o1000, false}, {1 << 32, false}, {1<<32 | 0o002, true}, {0o002, true}, {0o022, true}, {0o777, true}, {0xfffff012, true}} {
			want := uint32(retAllow)
			if !c.ok {
				want = unix.SECCOMP_RET_ERRNO | 4078 // 4096-0o022
			}
			if got := vm.run(t, arch, unix.SYS_UMASK, [6]uint64{c.mask}); got != want {
				t.Errorf("%s: umask(%#o): returns %#x, want %#x", mode, c.mask, got, want)
			}
		}
		// openat2: absent (ENOSYS), so that libc falls back to openat,
		// whose mode the program reads; with or without O_CREAT.
		for _, a := range [][6]uint64{{3, 0, 0, 24}, {3, 0x7f0000, 0x7f1000, 24}} {
			if got := vm.run(t, arch, unix.SYS_OPENAT2, a); got != retENOSYS {
				t.Errorf("%s: openat2 %#x: returns %#x, want ENOSYS %#x", mode, a, got, uint32(retENOSYS))
			}
		}
		// Another ABI: every call, exit included. A compat "socket" is
		// another number of another table: denied alike.
		for _, c := range []struct {
			arch, nr uint32
			ok       bool
		}{
			{unix.AUDIT_ARCH_I386, 1 /* exit */, false}, {unix.AUDIT_ARCH_I386, 102 /* socketcall */, false},
			{unix.AUDIT_ARCH_ARM, 248 /* exit_group */, false}, {unix.AUDIT_ARCH_ARM, 281 /* socket */, false},
			{unix.AUDIT_ARCH_PPC64LE, unix.SYS_READ, false}, {0, unix.SYS_READ, false},
			{arch, x32Bit | 60 /* x32 exit */, x32Bit == 0}, {arch, x32Bit | 41 /* x32 socket */, x32Bit == 0}, {arch, 0xffffffff, false},
		} {
			if c.arch == arch && x32Bit == 0 {
				continue // arm64 has no x32
			}
			want := map[bool]uint32{true: retAllow, false: retEPERM}[c.ok]
			if got := vm.run(t, c.arch, c.nr, [6]uint64{unix.AF_INET}); got != want {
				t.Errorf("%s: arch %#x call %#x: returns %#x, want %#x", mode, c.arch, c.nr, got, want)
			}
		}
	}
}

// FuzzSeccompFilter: on any call — architecture, number, arguments — each
// mode's program returns what the model says, and nothing but allow,
// EPERM, ENOSYS (openat2), EOPNOTSUPP (extended attributes at medium) or
// the step's umask (a umask that lets others write).
func FuzzSeccompFilter(f *testing.F) {
	f.Add(uint32(auditArch), uint32(unix.SYS_SOCKET), uint64(unix.AF_NETLINK), uint64(3), uint64(unix.NETLINK_SOCK_DIAG), uint64(0))
	f.Add(uint32(auditArch), uint32(unix.SYS_PRLIMIT64), uint64(7), uint64(7), uint64(0), uint64(1))
	f.Add(uint32(auditArch), uint32(unix.SYS_IOPRIO_SET), uint64(1), uint64(0), uint64(0), uint64(0))
	f.Add(uint32(unix.AUDIT_ARCH_I386), uint32(252), uint64(0), uint64(0), uint64(0), uint64(0))
	f.Add(uint32(auditArch), uint32(x32Bit|1), uint64(0), uint64(0), uint64(0), uint64(0))
	f.Add(uint32(auditArch), uint32(unix.SYS_FCHMODAT), uint64(0), uint64(0), uint64(0o777), uint64(0))
	f.Add(uint32(auditArch), uint32(unix.SYS_OPENAT), uint64(0), uint64(0), uint64(unix.O_CREAT), uint64(0o4755))
	f.Add(uint32(auditArch), uint32(unix.SYS_OPENAT2), uint64(0), uint64(0), uint64(0), uint64(24))
	f.Add(uint32(auditArch), uint32(unix.SYS_UMASK), uint64(0), uint64(0), uint64(0), uint64(0))
	vms := map[string]seccompVM{SyscallsRead: newSeccompVM(f, SyscallsRead), SyscallsOwn: newSeccompVM(f, SyscallsOwn)}
	f.Fuzz(func(t *testing.T, arch, nr uint32, a0, a1, a2, a3 uint64) {
		if nr < 1024 && arch&1 == 1 {
			arch = auditArch // reach the native calls more often
		}
		args := [6]uint64{a0, a1, a2, a3}
		for mode, vm := range vms {
			got := vm.run(t, arch, nr, args)
			if want := modelReturn(mode, arch, nr, args); got != want {
				t.Fatalf("%s: arch %#x call %d args %#x: returns %#x, want %#x", mode, arch, nr, args, got, want)
			}
		}
	})
}
