package confine

import "golang.org/x/sys/unix"

// arm64's native ABI; its arm32 (compat) calls are all denied. It has no
// x32.
const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
)

// legacyMetadata: arm64 has only the *at calls.
var legacyMetadata []uint32

// legacySetid: arm64 has only the *at calls.
var legacySetid []setidCall
