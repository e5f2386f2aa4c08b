//go:build linux && (amd64 || arm64)

package confine

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The bed of the seccomp kernel tests (seccomp_kernel_test.go): a
// throwaway user's scratch home, this test binary where that user can
// run it, a process of the user's the attacks aim at, a UDP listener,
// and the attacks judged by what they changed.

// bed is the scratch home of a throwaway user, with this test binary
// where that user can run it, and a process of the user's the attacks
// aim at.
type bed struct {
	home, exe, file string
	cred            *syscall.Credential
	victim          *exec.Cmd
	udp             net.PacketConn
}

// newBed makes the bed: as root, for a user ID no account has; as
// anyone else, for that user.
func newBed(t *testing.T) *bed {
	t.Helper()
	needLandlock(t)
	if !Seccomp() {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel takes no seccomp filter")
		}
		t.Skip("the kernel takes no seccomp filter")
	}
	b := &bed{}
	uid := os.Getuid()
	if os.Geteuid() == 0 {
		for uid = 0; uid == 0; {
			id := 61000 + rand.IntN(3000)
			if _, err := user.LookupId(strconv.Itoa(id)); err != nil {
				uid = id
			}
		}
		b.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), NoSetGroups: false}
	}
	dir, err := os.MkdirTemp("", "agent-seccomp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b.home, b.exe, b.file = filepath.Join(dir, "home"), filepath.Join(dir, "agent"), filepath.Join(dir, "home", "notes")
	if err := os.Mkdir(b.home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.file, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, os.Args[0], b.exe)
	for _, p := range []string{dir, b.home, b.file, b.exe} {
		if err := os.Lchown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dir, 0o755)
	b.reset(t)
	t.Cleanup(func() { b.victim.Process.Kill(); b.victim.Wait() })
	if b.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.udp.Close() })
	return b
}

// reset starts a new victim process and gives the file its first
// mode, times and attributes back: the attacks that worked before (the
// test's own, without the filter) changed them.
func (b *bed) reset(t *testing.T) {
	t.Helper()
	if b.victim != nil {
		b.victim.Process.Kill()
		b.victim.Wait()
	}
	b.victim = b.command("sleep", "300")
	if err := b.victim.Start(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	os.Chmod(b.file, 0o644)
	os.Chtimes(b.file, now, now)
	unix.Removexattr(b.file, "user.agent")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// command is argv as the bed's user, in its home.
func (b *bed) command(argv ...string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = b.home
	cmd.Env = []string{"HOME=" + b.home, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.cred}
	return cmd
}

// spec is level l's Spec over the bed, with the filter of mode.
func (b *bed) spec(l Level, mode string) Spec {
	s := Spec{NoRead: []string{b.home + "/.ssh"}, NoWrite: []string{b.home + "/.ssh", "/etc", "/usr"},
		Devices: []string{"/dev/null"}, Caps: CapsRead, Syscalls: mode}
	if l == NoProtected {
		s.Write, s.Net, s.Caps = true, true, CapsNoSystem
	}
	return s
}

// paths the confined commands are started by.
var paths = []struct {
	name string
	arg  string
}{{"launcher", LaunchArg}, {"thread", threadArg}}

// run runs script under /bin/sh confined to s by way of path, as the
// bed's user; its combined output and status.
func (b *bed) run(t *testing.T, path string, s Spec, script string) (string, int) {
	t.Helper()
	cmd := b.command(append(append([]string{b.exe, path}, s.Args()...), "/bin/sh", "-c", script)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// victimState is what the attacks on the other process would change.
type victimState struct {
	nice, policy string
	ioprio       int
	affinity     string
	nofile       string // the soft limit
}

func (b *bed) victimState(t *testing.T) victimState {
	t.Helper()
	pid := b.victim.Process.Pid
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:])) // field 3 on
	var st victimState
	st.nice, st.policy = f[19-3], f[41-3]
	io, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(pid), 0)
	if e != 0 {
		t.Fatal(e)
	}
	st.ioprio = int(io)
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		t.Fatal(err)
	}
	st.affinity = fmt.Sprint(set)
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(limits), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[1] == "open" && f[2] == "files" {
			st.nofile = f[3]
		}
	}
	return st
}

// fileState is the file's mode, times and extended attributes.
func (b *bed) fileState(t *testing.T) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(b.file, &st); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	n, _ := unix.Listxattr(b.file, buf)
	return fmt.Sprintf("mode %o mtime %d xattrs %q", st.Mode, st.Mtim.Sec, buf[:max(n, 0)])
}

// received reports whether the bed's UDP listener got a datagram.
func (b *bed) received() bool {
	b.udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	buf := make([]byte, 64)
	got := false
	for {
		if _, _, err := b.udp.ReadFrom(buf); err != nil {
			return got
		}
		got = true
		b.udp.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	}
}

// attack is one attack: its script, and whether it changed what it aims
// at (its outcome, measured before and after).
type attack struct {
	name, script string
	changed      func() bool
}

func (b *bed) attacks(t *testing.T) (toOthers, network, metadata []attack) {
	pid := strconv.Itoa(b.victim.Process.Pid)
	port := strconv.Itoa(b.udp.LocalAddr().(*net.UDPAddr).Port)
	before := b.victimState(t)
	vs := func(f func(now victimState) bool) func() bool {
		return func() bool { return f(b.victimState(t)) }
	}
	if before.nice == "19" {
		t.Fatal("the victim already runs at nice 19: renice cannot be seen (run the test at a lower nice)")
	}
	toOthers = []attack{
		{"renice another process", "renice -n 19 -p " + pid, vs(func(v victimState) bool { return v.nice != before.nice })},
		{"ionice another process", "ionice -c3 -p " + pid, vs(func(v victimState) bool { return v.ioprio != before.ioprio })},
		{"chrt another process", "chrt -i -p 0 " + pid, vs(func(v victimState) bool { return v.policy != before.policy })},
		{"prlimit another process", "prlimit --nofile=64: --pid " + pid,
			vs(func(v victimState) bool { return v.nofile != before.nofile })},
	}
	if runtime.NumCPU() > 1 {
		toOthers = append(toOthers, attack{"taskset another process", "taskset -p -c 0 " + pid,
			vs(func(v victimState) bool { return v.affinity != before.affinity })})
	}
	b.received() // nothing left from an earlier attack
	network = []attack{
		{"UDP to a listener", "bash -c 'echo leak > /dev/udp/127.0.0.1/" + port + "'", b.received},
	}
	if py, err := exec.LookPath("python3"); err == nil && strings.HasPrefix(py, "/usr/") {
		network = append(network, attack{"UDP from python", py + ` -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"leak", ("127.0.0.1", ` + port + `))'`, b.received})
	}
	file := b.fileState(t)
	fc := func() bool { return b.fileState(t) != file }
	metadata = []attack{
		{"chmod its own file", "chmod 600 " + b.file, fc},
		{"touch -d its own file", "touch -d 2001-01-01 " + b.file, fc},
	}
	return toOthers, network, metadata
}
