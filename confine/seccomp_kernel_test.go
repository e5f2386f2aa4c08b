//go:build linux && (amd64 || arm64)

package confine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel tests of the seccomp filters: each attack runs as a
// throwaway unprivileged user in a scratch home, under the Spec of its
// level — through the launcher (this test binary as `agent __confine`)
// and on a confined thread (Restrictor) — and is judged by what changed:
// the listener's datagrams, the file's mode and times, the other
// process's priority, I/O class, scheduling, affinity and limits. The
// same attacks under the same Landlock rules without the filter must
// succeed, or the test proves nothing.

// Helper programs of this test binary (maybeTestHelper).
const (
	threadArg = "__restrictor" // SPECFLAGS -- COMMAND: run COMMAND in Restrictor.Do
	tryArg    = "__try"        // NAME...: make each system call, print "NAME ok" or "NAME error"
	// SPECFLAGS -- COMMAND: as threadArg, in a process whose every
	// thread is refused unshare (a container's seccomp profile).
	noUnshareArg = "__nounshare"
)

// maybeTestHelper runs this test binary as one of the helper programs
// when its first argument names one (TestMain).
func maybeTestHelper() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case threadArg:
		os.Exit(runOnThread(os.Args[2:]))
	case noUnshareArg:
		os.Exit(runWithoutUnshare(os.Args[2:]))
	case tryArg:
		for _, name := range os.Args[2:] {
			fmt.Printf("%s %s\n", name, errText(try(name)))
		}
		os.Exit(0)
	}
}

// runOnThread runs a command as the local transport does: started on a
// thread a Restrictor confined.
func runOnThread(args []string) int {
	s, argv, err := ParseArgs(args)
	if err != nil || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "restrictor:", err)
		return LaunchExit
	}
	r, err := NewRestrictor(Compile(s))
	if err != nil {
		fmt.Fprintln(os.Stderr, "restrictor:", err)
		return LaunchExit
	}
	code := 0
	if err := r.Do(func() {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			code = 1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
	}); err != nil {
		fmt.Fprintln(os.Stderr, "restrictor:", err)
		return LaunchExit
	}
	return code
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	if errno, ok := err.(syscall.Errno); ok && errno == unix.EPERM {
		return "EPERM"
	}
	return "error:" + err.Error()
}

// try makes the system call name stands for.
func try(name string) error {
	kind, arg, _ := strings.Cut(name, ":")
	sock := func(domain, typ, proto int) error {
		fd, err := unix.Socket(domain, typ, proto)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	switch kind {
	case "inet":
		return sock(unix.AF_INET, unix.SOCK_DGRAM, 0)
	case "inet6":
		return sock(unix.AF_INET6, unix.SOCK_STREAM, 0)
	case "unix":
		return sock(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	case "netlink-route":
		return sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
	case "netlink-diag":
		return sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG)
	case "netlink-uevent":
		return sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_KOBJECT_UEVENT)
	case "xattr":
		return unix.Setxattr(arg, "user.agent", []byte("x"), 0)
	case "suid-chmod": // fchmodat
		return unix.Chmod(arg, 0o4755)
	case "sgid-fchmod":
		fd, err := unix.Open(arg, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Fchmod(fd, 0o2755)
	case "suid-create": // openat with O_CREAT
		return createUnlink(arg, 0o4755)
	case "suid-mknod":
		if err := unix.Mknod(arg, unix.S_IFREG|0o4755, 0); err != nil {
			return err
		}
		return unix.Unlink(arg)
	case "wother-chmod": // fchmodat: write for every user (a directory stays searchable)
		return unix.Chmod(arg, 0o757)
	case "wother-fchmod":
		fd, err := unix.Open(arg, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Fchmod(fd, 0o646)
	case "suid-openat2": // openat2 with O_CREAT: its mode is in a structure
		fd, err := unix.Openat2(unix.AT_FDCWD, arg, &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_EXCL, Mode: 0o4755})
		if err != nil {
			return err
		}
		unix.Close(fd)
		return unix.Unlink(arg)
	case "openat2-or-openat": // what libc and systemd do: openat2, and openat where it is absent
		fd, err := unix.Openat2(unix.AT_FDCWD, arg, &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_EXCL, Mode: 0o644})
		if err == unix.ENOSYS {
			fd, err = unix.Open(arg, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, 0o644)
		}
		if err != nil {
			return err
		}
		unix.Close(fd)
		return unix.Unlink(arg)
	case "chmod":
		return unix.Chmod(arg, 0o755)
	case "gw-chmod": // write for the group: allowed
		return unix.Chmod(arg, 0o664)
	case "create":
		return createUnlink(arg, 0o755)
	case "keyctl":
		_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, true)
		return err
	case "io_uring":
		var params [120]byte
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if e != 0 {
			return e
		}
		unix.Close(int(fd))
		return nil
	case "x32":
		_, _, e := unix.RawSyscall(x32Bit|unix.SYS_GETPID, 0, 0, 0)
		if e != 0 {
			return e
		}
		return nil
	}
	return fmt.Errorf("unknown call %q", name)
}

// TestSeccompHoldsSafeSteps: a safe step's filter stops UDP, any
// AF_INET socket, metadata changes and changes to another process of the
// same user, through the launcher and on a confined thread; without the
// filter, under the same Landlock rules, each of them works.
func TestSeccompHoldsSafeSteps(t *testing.T) {
	b := newBed(t)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			b.reset(t)
			toOthers, network, metadata := b.attacks(t)
			all := append(append(toOthers, network...), metadata...)
			for _, a := range all {
				out, code := b.run(t, p.arg, b.spec(ReadOnly, SyscallsRead), a.script)
				if a.changed() || code == 0 {
					t.Errorf("safe: %s: not blocked (exit %d): %q", a.name, code, out)
				}
				if !strings.Contains(out, "not permitted") && !strings.Contains(out, "Permission denied") {
					t.Errorf("safe: %s: the refusal does not say why: %q", a.name, out)
				}
			}
			// The same without the filter: each attack changes its aim.
			for _, a := range all {
				out, code := b.run(t, p.arg, b.spec(ReadOnly, ""), a.script)
				if !a.changed() || code != 0 {
					t.Errorf("without the filter: %s: did nothing (exit %d: %q); the test proves nothing", a.name, code, out)
				}
			}
		})
	}
}

// TestSeccompHoldsMediumSteps: a medium step's filter lets the network
// and metadata changes through and stops changes to another process.
func TestSeccompHoldsMediumSteps(t *testing.T) {
	b := newBed(t)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			b.reset(t)
			toOthers, network, metadata := b.attacks(t)
			for _, a := range toOthers {
				out, code := b.run(t, p.arg, b.spec(NoProtected, SyscallsOwn), a.script)
				if a.changed() || code == 0 {
					t.Errorf("medium: %s: not blocked (exit %d): %q", a.name, code, out)
				}
			}
			for _, a := range append(network, metadata...) {
				out, code := b.run(t, p.arg, b.spec(NoProtected, SyscallsOwn), a.script)
				if !a.changed() || code != 0 {
					t.Errorf("medium: %s: blocked (exit %d): %q", a.name, code, out)
				}
			}
			for _, a := range toOthers {
				out, code := b.run(t, p.arg, b.spec(NoProtected, ""), a.script)
				if !a.changed() || code != 0 {
					t.Errorf("without the filter: %s: did nothing (exit %d: %q); the test proves nothing", a.name, code, out)
				}
			}
		})
	}
}

// TestSeccompCalls: the calls no tool above makes, one by one: sockets
// of every family a safe step may not open, extended attributes, the
// keyring, io_uring, x32; and what a safe step keeps (AF_UNIX, ip's and
// ss's netlink). A call that fails here without the filter too (the
// kernel or the machine refuses it anyway) proves nothing and is left
// out, with a note.
func TestSeccompCalls(t *testing.T) {
	b := newBed(t)
	calls := []string{"inet", "inet6", "netlink-uevent", "xattr:" + b.file, "keyctl", "io_uring"}
	if x32Bit != 0 {
		calls = append(calls, "x32")
	}
	kept := []string{"unix", "netlink-route", "netlink-diag"}
	results := func(s Spec, names []string) map[string]string {
		t.Helper()
		out, code := b.run(t, LaunchArg, s, b.exe+" "+tryArg+" "+strings.Join(names, " "))
		if code != 0 {
			t.Fatalf("%s: exit %d: %q", tryArg, code, out)
		}
		m := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			k, v, _ := strings.Cut(line, " ")
			m[k] = v
		}
		return m
	}
	without := results(b.spec(ReadOnly, ""), calls)
	for _, tc := range []struct {
		mode  string
		level Level
		held  []string
	}{{SyscallsRead, ReadOnly, calls}, {SyscallsOwn, NoProtected, []string{"keyctl", "x32", "io_uring"}}} {
		with := results(b.spec(tc.level, tc.mode), append(calls, kept...))
		for _, c := range calls {
			held := false
			for _, h := range tc.held {
				held = held || h == c || strings.HasPrefix(c, h+":")
			}
			switch {
			case without[c] != "ok" && !(c == "x32" && without[c] == "error:function not implemented"):
				t.Logf("%s fails without the filter too (%s): not proven here", c, without[c])
			case c == "xattr:"+b.file && tc.mode == SyscallsOwn:
				if with[c] != "error:"+unix.EOPNOTSUPP.Error() {
					t.Errorf("%s: %s: %s, want EOPNOTSUPP", tc.mode, c, with[c])
				}
			case held && with[c] != "EPERM":
				t.Errorf("%s: %s: %s, want EPERM", tc.mode, c, with[c])
			case !held && with[c] != without[c]:
				t.Errorf("%s: %s: %s, want %s as without the filter", tc.mode, c, with[c], without[c])
			}
		}
		for _, c := range kept {
			if with[c] != "ok" {
				t.Errorf("%s: %s: %s, want it allowed", tc.mode, c, with[c])
			}
		}
	}
	// What a safe step does to itself stays allowed: nice, ionice of
	// its own command; ip and ss read the kernel's tables.
	for _, script := range []string{"nice -n 5 cat /proc/self/stat", "ionice -c3 true", "ip -o addr", "ss -x -a"} {
		if out, code := b.run(t, threadArg, b.spec(ReadOnly, SyscallsRead), script); code != 0 {
			t.Errorf("safe: %s: exit %d: %q", script, code, out)
		}
	}
}

// TestSeccompNoSetid: a medium step may change modes and create files,
// but never set a set-user-ID or set-group-ID bit — by chmod, fchmod, a
// file created with one (openat, or openat2, which is absent: ENOSYS),
// mknod, or a tool (install -m 4755, chmod =4755, cp -p of such a file):
// it would run as the step's user (root, for a step of root) for every
// other user of the host. Nor may its chmod give every user write (chmod
// o+w, 777, install -m 666): another user could replace files there until
// undo. Without the filter, under the same Landlock rules, each works;
// modes given at creation (0666 under the umask) and group write stay.
func TestSeccompNoSetid(t *testing.T) {
	b := newBed(t)
	// A directory of the step's user's own (the home holds protected
	// names: no entry may be added there).
	dir := filepath.Join(b.home, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if b.cred != nil {
		os.Chown(dir, int(b.cred.Uid), int(b.cred.Gid))
	}
	setid := []string{"suid-chmod:" + b.file, "sgid-fchmod:" + b.file, "suid-create:" + dir + "/new", "suid-mknod:" + dir + "/node",
		"wother-chmod:" + b.file, "wother-fchmod:" + b.file, "wother-chmod:" + dir}
	absent := []string{"suid-openat2:" + dir + "/new2"}
	kept := []string{"chmod:" + b.file, "gw-chmod:" + b.file, "create:" + dir + "/plain", "openat2-or-openat:" + dir + "/plain2"}
	run := func(s Spec) map[string]string {
		t.Helper()
		out, code := b.run(t, LaunchArg, s, b.exe+" "+tryArg+" "+strings.Join(append(append(setid, absent...), kept...), " "))
		if code != 0 {
			t.Fatalf("%s: exit %d: %q", tryArg, code, out)
		}
		m := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			k, v, _ := strings.Cut(line, " ")
			m[k] = v
		}
		os.Chmod(b.file, 0o644)
		os.Chmod(dir, 0o755)
		return m
	}
	without, with := run(b.spec(NoProtected, "")), run(b.spec(NoProtected, SyscallsOwn))
	for _, c := range setid {
		if without[c] != "ok" {
			t.Errorf("without the filter: %s: %s; the test proves nothing", c, without[c])
		}
		if with[c] != "EPERM" {
			t.Errorf("medium: %s: %s, want EPERM", c, with[c])
		}
	}
	for _, c := range absent {
		if without[c] != "ok" {
			t.Errorf("without the filter: %s: %s; the test proves nothing", c, without[c])
		}
		if with[c] != "error:"+unix.ENOSYS.Error() {
			t.Errorf("medium: %s: %s, want ENOSYS", c, with[c])
		}
	}
	for _, c := range kept {
		if with[c] != "ok" {
			t.Errorf("medium: %s: %s, want it allowed", c, with[c])
		}
	}
	// The tools, on a confined thread as a local step runs.
	for _, script := range []string{"install -m 4755 /bin/true " + dir + "/t1", "cp /bin/true " + dir + "/t2 && chmod =4755 " + dir + "/t2",
		"cp /bin/true " + dir + "/t3 && chmod g+s " + dir + "/t3", "install -m 666 /bin/true " + dir + "/t4",
		"cp /bin/true " + dir + "/t5 && chmod o+w " + dir + "/t5", "chmod 777 " + dir, "chmod -R a+w " + dir,
		"mkdir " + dir + "/d1 && chmod 1777 " + dir + "/d1", "chmod o=u " + dir,
		// An access list sets the mode's bits past chmod (o::rwx) and
		// names other users.
		"setfacl -m o::rwx " + dir, "setfacl -m u:nobody:rwx " + dir} {
		if out, code := b.run(t, threadArg, b.spec(NoProtected, SyscallsOwn), script); code == 0 {
			t.Errorf("medium: %s: exit 0: %q", script, out)
		}
	}
	// Created with the umask's mode, and group write: they run.
	for _, script := range []string{"touch " + dir + "/t6 && chmod g+w " + dir + "/t6", "mkdir " + dir + "/d2"} {
		if out, code := b.run(t, threadArg, b.spec(NoProtected, SyscallsOwn), script); code != 0 {
			t.Errorf("medium: %s: exit %d: %q", script, code, out)
		}
	}
	testUmaskLeaks(t, b)
	ents, _ := os.ReadDir(dir)
	for _, e := range append(ents, nil) {
		name := dir
		if e != nil {
			name = filepath.Join(dir, e.Name())
		}
		if fi, err := os.Lstat(name); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid|0o002) != 0 && fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("medium: %s is %v", name, fi.Mode())
		}
	}
}

// createUnlink creates arg with mode (openat with O_CREAT) and removes it.
func createUnlink(arg string, mode uint32) error {
	fd, err := unix.Open(arg, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, mode)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return unix.Unlink(arg)
}
