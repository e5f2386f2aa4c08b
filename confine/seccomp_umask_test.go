//go:build linux && (amd64 || arm64)

package confine

import (
	"archive/tar"
	"archive/zip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// umaskAttacks are scripts a medium step may run that try to leave a file
// or directory every user may write without a chmod the filter sees: the
// umask cleared first (dash's and bash's builtins, libc's umask from
// Python), a tool that clears it itself and creates with the mode given
// (mkdir -m, install -d -m), a mode copied from a 0777 source (cp
// --preserve, cp -a), an archive's 0666 member (tar -x, tar -xp, unzip)
// and a socket's 0777 (bind). busybox sh and perl were tried too (as
// dash and Python; docs/decisions.md). D is the step's
// directory, SRC a 0777 file, TAR and ZIP archives with a 0666 member.
var umaskAttacks = []string{
	"umask 0; touch D/sh-file; mkdir D/sh-dir; mkfifo D/sh-fifo",
	"bash -c 'umask 000; echo x > D/bash-file; mkdir D/bash-dir'",
	"umask 0; python3 -c 'import ctypes, os, socket; open(\"D/py-inherit\", \"w\"); ctypes.CDLL(None).umask(0); " +
		"open(\"D/py-file\", \"w\"); os.mkdir(\"D/py-dir\"); socket.socket(socket.AF_UNIX).bind(\"D/py-sock\")'",
	"mkdir -m 777 D/mkdir-m; install -d -m 777 D/install-d; install -m 777 /bin/true D/install-m",
	"cp --preserve=mode SRC D/cp-preserve; cp -a SRC D/cp-a",
	"tar -xf TAR -C D; mkdir D/tarp && tar -xpf TAR -C D/tarp",
	"mkdir D/unzip && unzip -o ZIP -d D/unzip",
}

// umaskKept: what reads the umask by setting another and putting it back
// (cp, mkdir -m, tar -x as a user, install, Python) keeps the step's own
// mask, not 0777 (modes 000): the refused call answers with it.
const umaskKept = "mkdir -m 755 D/b-mkdir && cp /bin/true D/b-cp && mkdir D/b-tar && tar -xf BTAR -C D/b-tar && " +
	"install -m 644 /bin/true D/b-inst && umask && bash -c umask && " +
	"python3 -c 'import os; open(\"D/b-py\", \"w\"); print(oct(os.umask(0o022)))'"

// testUmaskLeaks: the umask attacks, at medium, by each path (the
// launcher, a confined thread); without the filter, the shells' umask 0
// leaves files every user may write, or the test proves nothing.
// Called by TestSeccompNoSetid on its bed.
func testUmaskLeaks(t *testing.T, b *bed) {
	src, tarball, zipball, btar := fixtureArchives(t, b)
	expand := func(script, dir string) string {
		return strings.NewReplacer("D/", dir+"/", "SRC", src, "BTAR", btar, "TAR", tarball, "ZIP", zipball).Replace(script)
	}
	mkdir := func(name string) string {
		dir := filepath.Join(b.home, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if b.cred != nil {
			os.Chown(dir, int(b.cred.Uid), int(b.cred.Gid))
		}
		return dir
	}
	own := uint32(unix.Umask(0o022))
	unix.Umask(int(own))
	for _, p := range paths {
		dir := mkdir("umask-" + p.name)
		// All in one step (each in a subshell of its own), started by an
		// agent whose own umask is 0: the step's has umaskOthers all the
		// same (touch and mkdir without umask 0 of their own). The
		// launcher and a confined thread share the code (applySyscalls):
		// the launcher runs the shells' attacks alone, a thread all of
		// them and the programs that read the mask back.
		attacks := umaskAttacks
		if p.arg == LaunchArg {
			attacks = umaskAttacks[:2]
		}
		unix.Umask(0)
		b.run(t, p.arg, b.spec(NoProtected, SyscallsOwn), expand(oneStep(append(attacks, "touch D/agent0-file; mkdir D/agent0-dir")), dir))
		unix.Umask(int(own))
		for _, w := range worldWritable(t, dir) {
			t.Errorf("medium, %s: %s", p.name, w)
		}
		if p.arg == LaunchArg {
			continue
		}
		out, code := b.run(t, p.arg, b.spec(NoProtected, SyscallsOwn), expand(umaskKept, dir))
		want := own | umaskOthers
		// Each prints the step's mask: bash and Python read it with a
		// mask that keeps others out (allowed), dash with umask(0)
		// (refused: mask-4096, printed 37777770022; busybox sh too).
		lines := strings.Fields(out)
		if code != 0 || len(lines) != 3 {
			t.Errorf("medium, %s: %q: exit %d: %q", p.name, umaskKept, code, out)
			lines = nil
		}
		for _, l := range lines {
			if m, err := strconv.ParseUint(strings.TrimPrefix(l, "0o"), 8, 32); err != nil || uint32(m)&0o777 != want {
				t.Errorf("medium, %s: a shell's umask prints %q, want %s (%q)", p.name, l, octal(want), out)
			}
		}
		for name, mode := range map[string]uint32{"b-mkdir": 0o755, "b-cp": 0o755 &^ want, "b-tar/tb": 0o755 &^ want,
			"b-tar/tb/f": 0o644 &^ want, "b-inst": 0o644, "b-py": 0o666 &^ want} {
			if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil {
				t.Errorf("medium, %s: %v", p.name, err)
			} else if uint32(fi.Mode().Perm()) != mode {
				t.Errorf("medium, %s: %s is %v, want %s", p.name, name, fi.Mode(), octal(mode))
			}
		}
	}
	// Where unshare is refused, a confined thread keeps agent's umask
	// (022 here), and the filter still holds it.
	dir := mkdir("umask-nounshare")
	cmd := b.command(append(append([]string{b.exe, noUnshareArg}, b.spec(NoProtected, SyscallsOwn).Args()...),
		"/bin/sh", "-c", expand(oneStep(umaskAttacks[:2])+"; umask", dir))...)
	out, err := cmd.CombinedOutput()
	if m := strings.Fields(string(out)); err != nil || len(m) == 0 || !strings.HasSuffix(m[len(m)-1], octal(own | umaskOthers)[1:]) {
		t.Errorf("unshare refused: %v: %q, want the umask %s", err, out, octal(own|umaskOthers))
	}
	for _, w := range worldWritable(t, dir) {
		t.Errorf("medium, unshare refused: %s", w)
	}
	if fi, err := os.Stat(filepath.Join(dir, "sh-file")); err != nil {
		t.Errorf("unshare refused: the step did not run: %v: %q", err, out)
	} else if uint32(fi.Mode().Perm()) != 0o666&^(own|umaskOthers) {
		t.Errorf("unshare refused: sh-file is %v", fi.Mode())
	}

	// Without the filter (and its umask), the shells' umask 0 works.
	dir = mkdir("umask-unfiltered")
	b.run(t, threadArg, b.spec(NoProtected, ""), expand(oneStep(umaskAttacks[:2]), dir))
	if n := len(worldWritable(t, dir)); n < 5 {
		t.Errorf("without the filter: %d of 5 files left world-writable; the test proves nothing", n)
	}
}

// oneStep is scripts run one after another, each in a subshell.
func oneStep(scripts []string) string {
	return "(" + strings.Join(scripts, "); (") + ")"
}

// worldWritable lists what under dir every user may write (links aside).
func worldWritable(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o002 != 0 {
			out = append(out, p+" is "+fi.Mode().String())
		}
		return nil
	})
	return out
}

func octal(m uint32) string { return fmt.Sprintf("%04o", m) }

// fixtureArchives writes, in the bed's base directory (readable, not
// writable, by the bed's user): a 0777 file, a tar and a zip archive with
// a 0666 member, and a tar of a 0755 directory with a 0644 file.
func fixtureArchives(t *testing.T, b *bed) (src, tarball, zipball, btar string) {
	t.Helper()
	base := filepath.Dir(b.home)
	src = filepath.Join(base, "src777")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, 0o777); err != nil {
		t.Fatal(err)
	}
	writeTar := func(name string, hdrs ...*tar.Header) string {
		f, err := os.Create(filepath.Join(base, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w := tar.NewWriter(f)
		for _, h := range hdrs {
			if err := w.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if h.Size > 0 {
				w.Write(make([]byte, h.Size))
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return f.Name()
	}
	tarball = writeTar("m666.tar", &tar.Header{Name: "tar666", Mode: 0o666, Size: 3, Typeflag: tar.TypeReg},
		&tar.Header{Name: "tardir777/", Mode: 0o777, Typeflag: tar.TypeDir})
	btar = writeTar("b.tar", &tar.Header{Name: "tb/", Mode: 0o755, Typeflag: tar.TypeDir},
		&tar.Header{Name: "tb/f", Mode: 0o644, Size: 3, Typeflag: tar.TypeReg})
	f, err := os.Create(filepath.Join(base, "m666.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := zip.NewWriter(f)
	for name, mode := range map[string]fs.FileMode{"zip666": 0o666, "zipdir777/": fs.ModeDir | 0o777} {
		h := &zip.FileHeader{Name: name, Method: zip.Store}
		h.SetMode(mode)
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if !mode.IsDir() {
			fw.Write([]byte("zip"))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	zipball = f.Name()
	for _, p := range []string{tarball, zipball, btar} {
		os.Chmod(p, 0o644) // readable by the bed's user
	}
	return src, tarball, zipball, btar
}

// TestStepUmaskLeavesAgents: a confined thread takes a umask of its own
// (the process's is shared by its threads), with umaskOthers; agent's
// stays as it was — 0o020 here, which lets others write.
func TestStepUmaskLeavesAgents(t *testing.T) {
	needLandlock(t)
	if !Seccomp() {
		t.Skip("the kernel takes no seccomp filter")
	}
	old := unix.Umask(0o020)
	defer unix.Umask(old)
	r, err := NewRestrictor(Compile(Spec{Writable: []string{t.TempDir()}, Syscalls: SyscallsOwn}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var step int
	if err := r.Do(func() { step = unix.Umask(0o022); unix.Umask(step) }); err != nil {
		t.Fatal(err)
	}
	if step != 0o022 {
		t.Errorf("the confined thread's umask is %#o, want 0o022", step)
	}
	if agent := unix.Umask(0o020); agent != 0o020 {
		t.Errorf("agent's umask became %#o, want 0o020 as it was", agent)
	}
}

// runWithoutUnshare is runOnThread in a process whose threads are all
// refused unshare(2), as Docker's default seccomp profile refuses it
// without CAP_SYS_ADMIN.
func runWithoutUnshare(args []string) int {
	var p bpfProg
	deny := p.label()
	p.load(offNr)
	p.jump(unix.BPF_JEQ, unix.SYS_UNSHARE, deny, next)
	p.ret(retAllow)
	p.set(deny)
	p.ret(retEPERM)
	f := p.assemble()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "no_new_privs:", err)
		return LaunchExit
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); e != 0 {
		fmt.Fprintln(os.Stderr, "seccomp:", e)
		return LaunchExit
	}
	if unix.Unshare(unix.CLONE_FS) == nil {
		fmt.Fprintln(os.Stderr, "unshare still allowed")
		return LaunchExit
	}
	return runOnThread(args)
}
