package confine

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// capsOf parses CapEff and CapBnd from a /proc/PID/status.
func capsOf(t *testing.T, status string) (eff, bnd uint64) {
	t.Helper()
	for _, l := range strings.Split(status, "\n") {
		k, v, _ := strings.Cut(l, ":")
		n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		switch k {
		case "CapEff":
			eff = n
		case "CapBnd":
			bnd = n
		default:
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
	}
	return eff, bnd
}

// TestConfinedCommandsLoseCapabilities: root's confined command, on the
// thread and through the launcher, keeps none of the capabilities that
// change the system beyond its files (clock, host name, network
// configuration, raw sockets, mounts, modules, reboot, ptrace), and a
// read-only one keeps only what reading needs. Nothing is attempted: the
// capability sets are read from /proc.
func TestConfinedCommandsLoseCapabilities(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("capabilities matter for root's commands")
	}
	system := uint64(1<<unix.CAP_SYS_TIME | 1<<unix.CAP_SYS_ADMIN | 1<<unix.CAP_NET_ADMIN | 1<<unix.CAP_NET_RAW |
		1<<unix.CAP_SYS_BOOT | 1<<unix.CAP_SYS_MODULE | 1<<unix.CAP_SYS_PTRACE | 1<<unix.CAP_MKNOD)
	read := uint64(1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH)
	for _, tc := range []struct {
		caps  string
		allow uint64 // the most the command may hold
	}{{CapsRead, read}, {CapsNoSystem, ^system}} {
		rs := Compile(Spec{Caps: tc.caps, Write: true, Net: true})
		r, err := NewRestrictor(rs)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		var rerr error
		if err := r.Do(func() { out, rerr = exec.Command("cat", "/proc/self/status").Output() }); err != nil || rerr != nil {
			t.Fatalf("%s: %v %v", tc.caps, err, rerr)
		}
		r.Close()
		file := t.TempDir() + "/r.rules"
		if err := WriteRuleset(file, rs); err != nil {
			t.Fatal(err)
		}
		viaLauncher, code := launched(t, []string{RulesFlag, file, "--", "cat", "/proc/self/status"})
		if code != 0 {
			t.Fatalf("launcher: exit %d: %s", code, viaLauncher)
		}
		for how, status := range map[string]string{"thread": string(out), "launcher": viaLauncher} {
			eff, bnd := capsOf(t, status)
			if eff&^tc.allow != 0 || bnd&^tc.allow != 0 {
				t.Errorf("%s via %s: CapEff %x CapBnd %x hold more than %x", tc.caps, how, eff, bnd, tc.allow)
			}
			if eff&read != read {
				t.Errorf("%s via %s: CapEff %x lost what reading needs", tc.caps, how, eff)
			}
		}
	}
	// agent itself (a thread of its own) keeps its capabilities.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, _ := os.ReadFile("/proc/thread-self/status")
	if eff, _ := capsOf(t, string(b)); eff&system != system {
		t.Errorf("agent's own capabilities were dropped: %x", eff)
	}
}
