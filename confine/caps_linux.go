//go:build linux

package confine

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// Landlock confines the file system, TCP and signals, not what root's
// capabilities allow (setting the clock or the host name, network
// configuration over netlink, raw sockets, mounts, modules, reboot …):
// a confined command also loses capabilities, in the thread that execs it
// (the bounding set: as root, exec grants what it holds; the ambient and
// inheritable sets), so that root's command cannot regain them.

// systemCaps are dropped by CapsNoSystem.
var systemCaps = []int{unix.CAP_SYS_TIME, unix.CAP_SYS_BOOT, unix.CAP_SYS_MODULE, unix.CAP_SYS_ADMIN,
	unix.CAP_NET_ADMIN, unix.CAP_NET_RAW, unix.CAP_SYS_RAWIO, unix.CAP_SYS_PTRACE, unix.CAP_MKNOD,
	unix.CAP_SYS_NICE, unix.CAP_SYS_RESOURCE, unix.CAP_SYS_PACCT, unix.CAP_SYS_TTY_CONFIG, unix.CAP_SYSLOG,
	unix.CAP_WAKE_ALARM, unix.CAP_BLOCK_SUSPEND, unix.CAP_AUDIT_CONTROL, unix.CAP_AUDIT_READ,
	unix.CAP_MAC_ADMIN, unix.CAP_MAC_OVERRIDE, unix.CAP_LINUX_IMMUTABLE, unix.CAP_SETPCAP, unix.CAP_SETFCAP,
	unix.CAP_BPF, unix.CAP_PERFMON, unix.CAP_CHECKPOINT_RESTORE, unix.CAP_NET_BROADCAST, unix.CAP_IPC_LOCK,
	unix.CAP_SYS_CHROOT, unix.CAP_LEASE}

// capsKept is the set mode keeps, as a mask over capability numbers.
func capsKept(mode string) (uint64, bool) {
	switch mode {
	case CapsRead:
		return 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH, true
	case CapsNoSystem:
		keep := ^uint64(0)
		for _, c := range systemCaps {
			keep &^= 1 << uint(c)
		}
		return keep, true
	}
	return 0, false
}

// dropCaps limits the calling thread's capabilities to keep: the
// bounding set (what an exec as root gets), the permitted, effective and
// inheritable sets, and the ambient set. A thread that holds none to drop
// (not root) has nothing to do; one that holds some it cannot drop from
// the bounding set (no CAP_SETPCAP) is an error: the command must not run.
func dropCaps(keep uint64) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return wrap("capget", err)
	}
	eff := uint64(data[0].Effective) | uint64(data[1].Effective)<<32
	perm := uint64(data[0].Permitted) | uint64(data[1].Permitted)<<32
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return wrap("clear ambient capabilities", err)
	}
	if perm == 0 && unix.Geteuid() != 0 {
		// Not root and holding nothing: with no_new_privs, exec gains
		// nothing either (no set-user-ID, no file capabilities).
		return nil
	}
	setpcap := eff&(1<<unix.CAP_SETPCAP) != 0
	for c := 0; c < 64; c++ {
		if keep&(1<<uint(c)) != 0 {
			continue
		}
		if setpcap {
			// Dropped without asking first (one system call, not two, for
			// each of the ~41 a thread confines itself from): one not in
			// the set drops fine, one past the kernel's last is EINVAL,
			// and so is every one after it.
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if errors.Is(err, unix.EINVAL) {
				break
			}
			if err != nil {
				return wrap("drop capability "+strconv.Itoa(c), err)
			}
			continue
		}
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil || in == 0 {
			continue // past the kernel's last capability, or already gone
		}
		return errors.New("cannot drop capability " + strconv.Itoa(c) + " from the bounding set (no CAP_SETPCAP)")
	}
	for i := range data {
		k := uint32(keep >> (32 * uint(i)))
		data[i].Permitted &= k
		data[i].Effective &= k
		data[i].Inheritable = 0
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return wrap("capset", err)
	}
	return nil
}

// keepOf is what the rulesets' Caps modes together keep; false when none
// limits capabilities.
func keepOf(rss []Ruleset) (uint64, bool) {
	keep, limited := ^uint64(0), false
	for _, rs := range rss {
		if k, ok := capsKept(rs.Spec.Caps); ok {
			keep, limited = keep&k, true
		}
	}
	return keep, limited
}
