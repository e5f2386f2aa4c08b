//go:build linux && (amd64 || arm64)

package confine

import (
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp-bpf filters of the Syscalls modes (Spec.Syscalls), beside
// Landlock: a classic BPF program over the kernel's seccomp_data that
// answers EPERM — never a kill, so the step fails and says why — to the
// system calls a mode denies, and lets every other through. Assembled
// here from golang.org/x/sys/unix's constants rather than with
// github.com/elastic/go-seccomp-bpf: that library links fmt and a table
// of every architecture's system calls, built at each start (the launcher
// 1,683,618 → 2,003,106 bytes, 0.21 ms and 165 KB per start; its
// deny-list lets another ABI's calls through), docs/decisions.md,
// "The classifier decides who approves; the kernel holds what an unapproved step can do".
//
// The filter binds the calling thread and what it forks or execs, like
// Landlock's domain, and can never be removed: it is installed where the
// Landlock domain is (restrict, Restrictor.do), on a thread that ends
// with the command's start.

// seccompData offsets: the system call's number, its audit architecture,
// and the low and high halves of argument i (both architectures are
// little-endian).
const (
	offNr   = 0
	offArch = 4
)

func offArgLo(i uint32) uint32 { return 16 + 8*i }
func offArgHi(i uint32) uint32 { return 20 + 8*i }

// Return values.
const (
	retAllow   = unix.SECCOMP_RET_ALLOW
	retEPERM   = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS  = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retENOTSUP = unix.SECCOMP_RET_ERRNO | uint32(unix.EOPNOTSUPP)
)

// Arguments the filters compare.
const (
	afUnix           = unix.AF_UNIX
	afNetlink        = unix.AF_NETLINK
	netlinkRoute     = unix.NETLINK_ROUTE     // ip addr, ip route (changing them needs CAP_NET_ADMIN, which no level keeps)
	netlinkSockDiag  = unix.NETLINK_SOCK_DIAG // ss
	prioProcess      = unix.PRIO_PROCESS      // setpriority's which for one process
	ioprioWhoProcess = 1                      // ioprio_set's which for one process
)

// ioctl requests a filter denies: pushing input into a terminal (both
// modes), and changing a file's flags, project or generation (chattr:
// metadata, SyscallsRead). The encodings are asm-generic's, the same on
// both architectures.
var (
	ioctlTerminal = []uint32{unix.TIOCSTI, unix.TIOCLINUX}
	ioctlMetadata = []uint32{
		0x40086602, // FS_IOC_SETFLAGS
		0x40046602, // FS_IOC32_SETFLAGS
		0x401c5820, // FS_IOC_FSSETXATTR
		0x40087602, // FS_IOC_SETVERSION
		0x40047602, // FS_IOC32_SETVERSION
	}
)

// metadataCalls change a file's mode, owner, times or extended
// attributes (SyscallsRead), with the architecture's older calls
// (legacyMetadata).
var metadataCalls = slices.Concat([]uint32{unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2, unix.SYS_FCHOWN,
	unix.SYS_FCHOWNAT, unix.SYS_UTIMENSAT}, xattrCalls, legacyMetadata)

// xattrCalls set or remove extended attributes. SyscallsOwn answers them
// EOPNOTSUPP, as a file system without extended attributes does (cp -a,
// rsync -X, tar --xattrs, curl --xattr carry on without them): an access
// list (system.posix_acl_access, setfacl) sets the mode's bits past
// chmod's check (setfacl -m o::rwx ~) and grants a named user write,
// removing one may widen the group's bits to the mask, and the undo
// journal keeps neither (setfacl and setfattr are high).
var xattrCalls = []uint32{unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_SETXATTRAT,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_REMOVEXATTRAT}

// othersCalls are denied to both modes: another process's memory (read,
// written, advised), the kernel's keyrings (a user's keys, shared by
// its processes), opening a file by handle (past every path rule), and
// io_uring, whose operations (an openat with a set-id mode, a socket,
// sendmsg, setxattr) run without their system call and so past the
// filter — EPERM, as a kernel whose io_uring is switched off answers
// (sysctl kernel.io_uring_disabled), which its users take as "use the
// system calls".
var othersCalls = []uint32{unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PROCESS_MADVISE,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_OPEN_BY_HANDLE_AT,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER}

// absentCalls answer ENOSYS in both modes, as a kernel without them
// does, so that libc and the programs that use them fall back to a call
// the filter reads: openat2, whose mode (a set-id bit) sits in a
// structure the filter cannot read; openat, its fallback, is checked.
var absentCalls = []uint32{unix.SYS_OPENAT2}

// setidBits are the mode bits no confined step may set (SyscallsOwn;
// SyscallsRead denies every mode change): a set-user-ID or set-group-ID
// file made by a medium step runs as its owner for every other user of
// the host — root's, when the step runs as root — until undo removes it,
// and nothing in a script run at medium is seen by the classifier.
const setidBits = unix.S_ISUID | unix.S_ISGID

// chmodBits are the bits a medium step's chmod may not set: setidBits,
// and write for every other user (S_IWOTH): a home, ~/.config or a
// directory of the step's made world-writable lets another user of the
// host replace what is in it until undo restores the mode, and the
// filter cannot read chmod's path to tell a scratch file from the home.
// A world-writable file is rarely needed and asks at high (the
// classifier rates it so). A mode given when creating a file or
// directory (open, creat, mknod, mkdir) is not checked for S_IWOTH:
// programs pass 0666 and 0777 there and rely on the umask, which keeps
// S_IWOTH out (umaskOthers).
const chmodBits = setidBits | unix.S_IWOTH

// setidCall is a call whose mode argument (mode) may not carry bits —
// only when its flags argument (flags, or -1: always) creates a file.
type setidCall struct {
	nr          uint32
	flags, mode int
	bits        uint32
}

// setidCalls are the calls of both architectures that set a mode: chmod's
// (chmodBits) and those that create a file with one (setidBits: open's
// O_CREAT or O_TMPFILE, mknod's regular file). openat2, whose mode the
// filter cannot read, is absent (absentCalls), and so is io_uring's
// openat (othersCalls).
var setidCalls = append([]setidCall{{unix.SYS_FCHMOD, -1, 1, chmodBits}, {unix.SYS_FCHMODAT, -1, 2, chmodBits},
	{unix.SYS_FCHMODAT2, -1, 2, chmodBits}, {unix.SYS_OPENAT, 2, 3, setidBits}, {unix.SYS_MKNODAT, -1, 2, setidBits}},
	legacySetid...)

// createFlags are the open flags under which its mode is used.
const createFlags = unix.O_CREAT | unix.O_TMPFILE&^unix.O_DIRECTORY

// selfOnlyCalls take a PID first and are allowed only on the caller
// (0): another process's scheduling, affinity and memory placement.
var selfOnlyCalls = []uint32{unix.SYS_SCHED_SETATTR, unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETSCHEDULER,
	unix.SYS_SCHED_SETAFFINITY, unix.SYS_MIGRATE_PAGES, unix.SYS_MOVE_PAGES}

// umaskOthers is the umask bit no confined step may clear: write for
// every other user. The confinement sets the step's umask to its own
// with this bit (stepUmask), and both modes refuse a umask(2) whose new
// mask clears it, so that a file or directory a step creates (open,
// mkdir, mknod, bind, whose modes the filter does not check: programs
// pass 0666 and 0777 there) never lets every user write — a medium
// step's `umask 0; mkdir ~/x` or Python's os.umask(0) before open.
const umaskOthers = unix.S_IWOTH

// retUmask is the answer to a refused umask(2) when the step's umask is
// mask: the "error" 4096-mask, which the call returns as mask-4096 —
// the old mask in its low 12 bits, since umask cannot fail and libc
// hands its value over unchecked. A program that reads the umask by
// setting another and putting the old one back (cp, mkdir -m, tar -x:
// old = umask(0); umask(old)) then puts back the step's own mask, as it
// would with the call allowed; EPERM's -1 would have put back 0777 and
// made its files mode 000. The mask stays as it was either way.
func retUmask(mask uint32) uint32 { return unix.SECCOMP_RET_ERRNO | (4096 - mask&0o777) }

// seccompFilter is the program of mode for a step whose umask is mask
// (stepUmask), built once for each.
func seccompFilter(mode string, mask uint32) []unix.SockFilter {
	i := 0
	switch mode {
	case SyscallsRead:
	case SyscallsOwn:
		i = 1
	default:
		return nil
	}
	filters.Lock()
	defer filters.Unlock()
	c := &filters.of[i]
	if c.prog == nil || c.mask != mask {
		c.mask, c.prog = mask, buildFilter(i == 0, mask)
	}
	return c.prog
}

// filters keeps each mode's last program: a process's umask, hence a
// step's, seldom changes.
var filters struct {
	sync.Mutex
	of [2]struct {
		mask uint32
		prog []unix.SockFilter
	}
}

// buildFilter assembles the program of SyscallsRead (readOnly) or
// SyscallsOwn for a step whose umask is mask.
func buildFilter(readOnly bool, mask uint32) []unix.SockFilter {
	var p bpfProg
	deny, allow := p.label(), p.label()
	// Another ABI's calls (i386's or arm32's, another architecture's, x32's
	// numbers with bit 30 set): all denied, exit included — a program of
	// another ABI dies on its first call (its libc's _exit ends in a
	// fault).
	p.load(offArch)
	p.jump(unix.BPF_JEQ, auditArch, next, deny)
	p.load(offNr)
	if x32Bit != 0 {
		p.jump(unix.BPF_JGE, x32Bit, deny, next)
	}
	denied := othersCalls
	if readOnly {
		denied = append(append([]uint32(nil), denied...), metadataCalls...)
	}
	// The calls whose arguments decide, each to its own block below.
	type block struct {
		nr   uint32
		at   label
		emit func()
	}
	selfOnly := func() { p.load(offArgLo(0)); p.jump(unix.BPF_JEQ, 0, allow, deny) }
	var blocks []block
	for _, nr := range selfOnlyCalls {
		blocks = append(blocks, block{nr, p.label(), selfOnly})
	}
	blocks = append(blocks,
		// setpriority, ioprio_set: on the calling process only (which
		// = one process, who = 0); a user's or a group's 0 is all of
		// them.
		block{unix.SYS_SETPRIORITY, p.label(), func() { p.whoIsSelf(prioProcess, allow, deny) }},
		block{unix.SYS_IOPRIO_SET, p.label(), func() { p.whoIsSelf(ioprioWhoProcess, allow, deny) }},
		// prlimit64: reading any process's limits, setting the caller's.
		block{unix.SYS_PRLIMIT64, p.label(), func() {
			p.load(offArgLo(0))
			p.jump(unix.BPF_JEQ, 0, allow, next)
			p.load(offArgLo(2))
			p.jump(unix.BPF_JEQ, 0, next, deny)
			p.load(offArgHi(2))
			p.jump(unix.BPF_JEQ, 0, allow, deny)
		}},
		// umask: only a mask that keeps others from writing; else the
		// step's mask back, unchanged (retUmask).
		block{unix.SYS_UMASK, p.label(), func() {
			p.load(offArgLo(0))
			p.jump(unix.BPF_JSET, umaskOthers, allow, next)
			p.ret(retUmask(mask))
		}},
		block{unix.SYS_IOCTL, p.label(), func() {
			p.load(offArgLo(1))
			reqs := ioctlTerminal
			if readOnly {
				reqs = append(append([]uint32(nil), reqs...), ioctlMetadata...)
			}
			for _, r := range reqs {
				p.jump(unix.BPF_JEQ, r, deny, next)
			}
			p.ret(retAllow)
		}},
	)
	if !readOnly {
		// No set-user-ID or set-group-ID bit, and no chmod that lets
		// every user write (SyscallsRead denies every mode change
		// already).
		for _, c := range setidCalls {
			blocks = append(blocks, block{c.nr, p.label(), func() {
				if c.flags >= 0 {
					p.load(offArgLo(uint32(c.flags)))
					p.jump(unix.BPF_JSET, createFlags, next, allow)
				}
				p.load(offArgLo(uint32(c.mode)))
				p.jump(unix.BPF_JSET, c.bits, deny, allow)
			}})
		}
	}
	if readOnly {
		blocks = append(blocks,
			// socket: AF_UNIX, and netlink's route and diagnostics.
			block{unix.SYS_SOCKET, p.label(), func() {
				p.load(offArgLo(0))
				p.jump(unix.BPF_JEQ, afUnix, allow, next)
				p.jump(unix.BPF_JEQ, afNetlink, next, deny)
				p.load(offArgLo(2))
				p.jump(unix.BPF_JEQ, netlinkRoute, allow, next)
				p.jump(unix.BPF_JEQ, netlinkSockDiag, allow, deny)
			}},
			block{unix.SYS_SOCKETPAIR, p.label(), func() { p.load(offArgLo(0)); p.jump(unix.BPF_JEQ, afUnix, allow, deny) }},
		)
	}
	absent, unsupported := p.label(), p.label()
	dispatch := make([]target, 0, len(denied)+len(absentCalls)+len(xattrCalls)+len(blocks))
	for _, nr := range denied {
		dispatch = append(dispatch, target{nr, deny})
	}
	for _, nr := range absentCalls {
		dispatch = append(dispatch, target{nr, absent})
	}
	if !readOnly {
		for _, nr := range xattrCalls {
			dispatch = append(dispatch, target{nr, unsupported})
		}
	}
	for _, b := range blocks {
		dispatch = append(dispatch, target{b.nr, b.at})
	}
	// Sorted by number (an insertion sort: slices.SortFunc adds 8 KB
	// to the launcher for some fifty entries).
	for i := 1; i < len(dispatch); i++ {
		for j := i; j > 0 && dispatch[j].nr < dispatch[j-1].nr; j-- {
			dispatch[j], dispatch[j-1] = dispatch[j-1], dispatch[j]
		}
	}
	p.search(dispatch)
	for _, b := range blocks {
		p.set(b.at)
		b.emit()
	}
	p.set(deny)
	p.ret(retEPERM)
	p.set(absent)
	p.ret(retENOSYS)
	p.set(unsupported)
	p.ret(retENOTSUP)
	p.set(allow)
	p.ret(retAllow)
	return p.assemble()
}

// label is a place in a bpfProg a jump goes to; next is the instruction
// after the jump.
type label int

const next label = -1

// bpfProg assembles a classic BPF program whose jumps go forward to
// labels.
type bpfProg struct {
	ins    []unix.SockFilter
	at     []int // each label's instruction, -1 until set
	fixups []fixup
}

type fixup struct {
	ins  int
	t, f label
}

func (p *bpfProg) label() label { p.at = append(p.at, -1); return label(len(p.at) - 1) }

func (p *bpfProg) set(l label) { p.at[l] = len(p.ins) }

// load loads the 32-bit word of seccomp_data at off.
func (p *bpfProg) load(off uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (p *bpfProg) ret(v uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v})
}

// jump goes to t when A op k holds, else to f.
func (p *bpfProg) jump(op uint16, k uint32, t, f label) {
	p.fixups = append(p.fixups, fixup{ins: len(p.ins), t: t, f: f})
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

// target is where the call nr goes.
type target struct {
	nr uint32
	to label
}

// search sends the call in A to its target among ts (sorted by number,
// each once), or allows it: a binary search on the number, so that a
// call no mode names — nearly every call a command makes — passes a
// handful of comparisons, not one per call named. The kernel emulates
// the program for every call number when it installs it (to cache the
// calls always allowed): its length on that path is most of what a
// filter costs to install (~0.1 ms for one comparison per call, in
// BenchmarkLocalStep).
func (p *bpfProg) search(ts []target) {
	if len(ts) <= 3 {
		for _, t := range ts {
			p.jump(unix.BPF_JEQ, t.nr, t.to, next)
		}
		p.ret(retAllow)
		return
	}
	mid := len(ts) / 2
	right := p.label()
	p.jump(unix.BPF_JGE, ts[mid].nr, right, next)
	p.search(ts[:mid])
	p.set(right)
	p.search(ts[mid:])
}

// whoIsSelf allows a call whose first two arguments are which and 0.
func (p *bpfProg) whoIsSelf(which uint32, allow, deny label) {
	p.load(offArgLo(0))
	p.jump(unix.BPF_JEQ, which, next, deny)
	p.load(offArgLo(1))
	p.jump(unix.BPF_JEQ, 0, allow, deny)
}

// assemble resolves the jumps; a jump too far for its 8 bits, or to a
// label never set, is a bug in buildFilter (TestSeccompFilters builds
// every mode).
func (p *bpfProg) assemble() []unix.SockFilter {
	off := func(from int, l label) uint8 {
		if l == next {
			return 0
		}
		d := p.at[l] - from - 1
		if p.at[l] < 0 || d < 0 || d > 255 {
			panic("confine: seccomp filter: a jump to label " + strconv.Itoa(int(l)) + " from " + strconv.Itoa(from) + " cannot be encoded")
		}
		return uint8(d)
	}
	for _, f := range p.fixups {
		p.ins[f.ins].Jt = off(f.ins, f.t)
		p.ins[f.ins].Jf = off(f.ins, f.f)
	}
	return p.ins
}

// Seccomp reports whether the kernel takes seccomp filters: when it does
// not, a confined command runs under Landlock alone and the probe says so
// ("seccomp 0"; engine reports it as it reports a kernel without
// Landlock).
var Seccomp = sync.OnceValue(func() bool {
	// A NULL program: EFAULT where filters are taken, EINVAL where
	// CONFIG_SECCOMP_FILTER is off, ENOSYS without CONFIG_SECCOMP.
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, 0)
	return e == unix.EFAULT
})

// applySyscalls installs on the calling thread the filter of each
// ruleset's Syscalls mode (stacked, as the kernel does: EPERM wins over
// allow), after no_new_privs, which an unprivileged thread needs to
// install one. A kernel without seccomp installs nothing (Seccomp).
func applySyscalls(rss []Ruleset) error {
	if !slices.ContainsFunc(rss, func(rs Ruleset) bool { return rs.Spec.Syscalls != "" }) {
		return nil
	}
	mask, err := stepUmask()
	if err != nil {
		return err
	}
	var done [2]bool
	for _, rs := range rss {
		i := 0
		switch rs.Spec.Syscalls {
		case "":
			continue
		case SyscallsOwn:
			i = 1
		}
		if done[i] || !Seccomp() {
			continue
		}
		done[i] = true
		if err := installFilter(seccompFilter(rs.Spec.Syscalls, mask)); err != nil {
			return err
		}
	}
	return nil
}

// stepUmask gives the calling thread a umask of its own (the process's
// is shared by its threads: agent's own files keep theirs) and adds
// umaskOthers to it, before the filter that keeps it there; it returns
// the mask. What the thread forks or execs inherits it. A kernel without
// seccomp keeps the mask too, until the step changes it.
//
// Where unshare is refused (a container's seccomp profile: Docker's
// default gives it to CAP_SYS_ADMIN alone), the thread shares agent's
// umask and keeps it; the filter still refuses a umask that clears
// umaskOthers, and answers as if the step's had it. The launcher, which
// execs right after, sets its process's own.
func stepUmask() (uint32, error) {
	if unix.Unshare(unix.CLONE_FS) != nil && !umaskOwnProcess {
		mask := unix.Umask(0o077) // read: the process's mask, kept
		unix.Umask(mask)
		return uint32(mask) | umaskOthers, nil
	}
	mask := uint32(unix.Umask(0o077)) | umaskOthers
	unix.Umask(int(mask))
	return mask, nil
}

// installFilter installs f on the calling thread. SPEC_ALLOW: the
// filter does not also switch on the speculative-store-bypass
// mitigation for the command (kernels before 5.16 did by default), which
// would protect it, not agent, at a cost in speed.
func installFilter(f []unix.SockFilter) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return wrap("no_new_privs", err)
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW, uintptr(unsafe.Pointer(&prog)))
	if e == unix.EINVAL {
		_, _, e = unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	}
	if e != 0 {
		return wrap("seccomp", e)
	}
	return nil
}
