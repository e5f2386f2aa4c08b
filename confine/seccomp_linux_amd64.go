package confine

import "golang.org/x/sys/unix"

// x86-64's native ABI; its i386 (int 0x80) and x32 (numbers with bit 30
// set) calls are all denied.
const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000
)

// legacyMetadata are x86-64's metadata calls that arm64 has only as *at.
var legacyMetadata = []uint32{unix.SYS_CHMOD, unix.SYS_CHOWN, unix.SYS_LCHOWN, unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT}

// legacySetid are x86-64's calls that set a mode and that arm64 has only
// as *at: chmod, open, creat, mknod (setidCalls).
var legacySetid = []setidCall{{unix.SYS_CHMOD, -1, 1, chmodBits}, {unix.SYS_OPEN, 1, 2, setidBits},
	{unix.SYS_CREAT, -1, 1, setidBits}, {unix.SYS_MKNOD, -1, 1, setidBits}}
