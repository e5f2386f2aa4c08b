package confine

import "golang.org/x/sys/unix"

// x86-64's ABIs: the native one; i386's (int 0x80), whose calls only
// exit; x32's (numbers with bit 30 set), whose calls only exit too.
const (
	auditArch       = unix.AUDIT_ARCH_X86_64
	compatArch      = unix.AUDIT_ARCH_I386
	compatExit      = 1
	compatExitGroup = 252
	x32Bit          = 0x40000000
	x32Exit         = 60
	x32ExitGroup    = 231
)

// legacyMetadata are x86-64's metadata calls that arm64 has only as *at.
var legacyMetadata = []uint32{unix.SYS_CHMOD, unix.SYS_CHOWN, unix.SYS_LCHOWN, unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT}
