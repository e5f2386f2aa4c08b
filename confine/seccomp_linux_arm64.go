package confine

import "golang.org/x/sys/unix"

// arm64's ABIs: the native one; arm32's (compat), whose calls only exit.
// It has no x32.
const (
	auditArch       = unix.AUDIT_ARCH_AARCH64
	compatArch      = unix.AUDIT_ARCH_ARM
	compatExit      = 1
	compatExitGroup = 248
	x32Bit          = 0
	x32Exit         = 0
	x32ExitGroup    = 0
)

// legacyMetadata: arm64 has only the *at calls.
var legacyMetadata []uint32
