package confine

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	MaybeLaunch()
	maybeTestHelper()
	os.Exit(m.Run())
}

// needLandlock skips where the kernel has none (fails under CI=true).
func needLandlock(t *testing.T) {
	t.Helper()
	if ABI() < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel has no Landlock")
		}
		t.Skip("the kernel has no Landlock")
	}
}

// confined runs script under /bin/sh confined to s through this test
// binary as the launcher, and returns its combined output and status.
func confined(t *testing.T, s Spec, script string) (string, int) {
	t.Helper()
	args := append([]string{LaunchArg}, s.Args()...)
	return runSelf(t, append(args, "/bin/sh", "-c", script))
}

// runSelf runs this test binary with args, returning its combined output
// and status.
func runSelf(t *testing.T, args []string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

// home makes a home directory with a secret, a public file beside it and a
// start-up file, and returns it with the Spec of a level over it.
func home(t *testing.T, l Level) (string, Spec) {
	t.Helper()
	h := t.TempDir()
	for name, data := range map[string]string{".ssh/id_rsa": "SECRETKEY", ".ssh/known_hosts": "host key", ".bashrc": "rc",
		"work/notes": "notes", ".config/agent/config.yaml": "policy"} {
		p := filepath.Join(h, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := Spec{
		NoRead:  []string{h + "/.ssh", h + "/.config/agent"},
		Public:  []string{h + "/.ssh/known_hosts", "*.pub"},
		NoWrite: []string{h + "/.ssh", h + "/.bashrc", h + "/.bash_profile", h + "/.config/agent", "/etc", "/usr"},
		Devices: []string{"/dev/null", "/dev/zero"},
		Write:   l == NoProtected, Net: l == NoProtected,
	}
	return h, s
}

func TestLaunchProbe(t *testing.T) {
	var out bytes.Buffer
	if code := Launch([]string{ProbeFlag}, &out, &out); code != 0 || out.String() != fmt.Sprintf("landlock %d protocol %d seccomp %d\n", ABI(), Protocol, map[bool]int{true: 1}[Seccomp()]) {
		t.Fatalf("probe: %d %q", code, out.String())
	}
}

func TestReadOnlyBlocksWritesSecretsNetAndSignals(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct{ name, script string }{
		{"write a new file", "echo x > " + h + "/work/new"},
		{"append to a file", "echo x >> " + h + "/work/notes"},
		{"truncate", ": > " + h + "/work/notes"},
		{"remove", "rm -f " + h + "/work/notes"},
		{"mkdir", "mkdir " + h + "/work/d"},
		{"rename", "mv " + h + "/work/notes " + h + "/work/n2"},
		{"symlink", "ln -s /etc/passwd " + h + "/work/l"},
		{"write /tmp", "echo x > " + t.TempDir() + "/x"},
		{"read a secret", "cat " + h + "/.ssh/id_rsa"},
		{"read agent's config", "cat " + h + "/.config/agent/config.yaml"},
		{"read through /proc/self/root", "cat /proc/self/root" + h + "/.ssh/id_rsa"},
		{"read through a relative cd", "cd " + h + " && cd .ssh && cat id_rsa"},
		{"signal a process outside", fmt.Sprintf("kill -0 %d", os.Getpid())},
		{"tcp connect", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)},
	} {
		script := tc.script
		if strings.Contains(script, "/dev/tcp") {
			script = "bash -c '" + script + "'"
		}
		out, code := confined(t, s, script)
		if code == 0 || strings.Contains(out, "SECRETKEY") || strings.Contains(out, "policy") {
			t.Errorf("%s: not blocked (exit %d): %q", tc.name, code, out)
		}
	}
	if b, _ := os.ReadFile(h + "/work/notes"); string(b) != "notes" {
		t.Errorf("notes changed: %q", b)
	}
	if _, err := os.Stat(h + "/work/new"); err == nil {
		t.Error("a file was created")
	}
	out, code := confined(t, s, "cat "+h+"/work/notes "+h+"/.ssh/known_hosts; echo ok >/dev/null; echo out >/dev/stdout; ls "+h+
		"; sleep 0.1 & kill $!; kill -0 $$ && echo self; head -c1 /dev/zero | wc -c")
	if code != 0 || !strings.Contains(out, "noteshost key") || !strings.Contains(out, "out\n") || !strings.Contains(out, "self") {
		t.Errorf("what a safe step may do failed (exit %d): %q", code, out)
	}
}

func TestNoProtectedWritesAllButProtected(t *testing.T) {
	needLandlock(t)
	h, s := home(t, NoProtected)
	for _, tc := range []struct{ name, script string }{
		{"write a start-up file", "echo evil >> " + h + "/.bashrc"},
		{"create a missing start-up file", "echo evil > " + h + "/.bash_profile"},
		{"write authorized keys", "echo KEY >> " + h + "/.ssh/authorized_keys"},
		{"through cd", "cd " + h + "/.ssh && echo KEY >> authorized_keys2"},
		{"through a symlink", "ln -s " + h + "/.bashrc " + h + "/work/x && echo evil >> " + h + "/work/x"},
		{"replace by rename", "echo evil > " + h + "/work/rc && mv -f " + h + "/work/rc " + h + "/.bashrc"},
		{"remove", "rm -f " + h + "/.bashrc"},
		{"rewrite agent's policy", "echo 'x' > " + h + "/.config/agent/config.yaml"},
		{"write /etc", "echo x > /etc/agent-confine-test"},
		{"read a secret", "cat " + h + "/.ssh/id_rsa"},
		{"signal a process outside", fmt.Sprintf("kill -0 %d", os.Getpid())},
	} {
		out, code := confined(t, s, tc.script)
		if code == 0 || strings.Contains(out, "SECRETKEY") {
			t.Errorf("%s: not blocked (exit %d): %q", tc.name, code, out)
		}
	}
	if b, _ := os.ReadFile(h + "/.bashrc"); string(b) != "rc" {
		t.Errorf(".bashrc changed: %q", b)
	}
	for _, p := range []string{h + "/.bash_profile", h + "/.ssh/authorized_keys", h + "/.ssh/authorized_keys2", "/etc/agent-confine-test"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
			os.Remove(p)
		}
	}
	tmp := t.TempDir()
	out, code := confined(t, s, "echo 2 > "+h+"/work/notes && mkdir "+h+"/work/d && echo y > "+h+"/work/d/f && mv "+h+"/work/d/f "+tmp+"/f && cat "+tmp+"/f && rm "+tmp+"/f")
	if code != 0 || out != "y\n" {
		t.Errorf("medium work failed (exit %d): %q", code, out)
	}
	if b, _ := os.ReadFile(h + "/work/notes"); string(b) != "2\n" {
		t.Errorf("notes = %q", b)
	}
}

func TestLaunchRefusesBadArgs(t *testing.T) {
	for _, args := range [][]string{nil, {"--"}, {"-write"}, {"-no-read"}, {"-no-read", "rel", "--", "true"},
		{"-no-write", "/a/../b", "--", "true"}, {"-bogus", "--", "true"}, {"-public", "", "--", "true"},
		{"-rules"}, {"-rules", "/nonexistent", "--", "true"}, {"-compile", "rel", "--"}, {"-compile", "/tmp/x", "--", "true"},
		{"-syscalls"}, {"-syscalls", "all", "--", "true"}, {"-syscalls", "--", "true"}} {
		var out bytes.Buffer
		if code := Launch(args, &out, &out); code != LaunchExit || !strings.HasPrefix(out.String(), LaunchPrefix) {
			t.Errorf("%q: exit %d, %q", args, code, out.String())
		}
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("-write\x00-no-read\x00/a\x00--\x00sh")
	f.Add("-public\x00*.pub\x00-device\x00/dev/null\x00--\x00true")
	f.Add("--")
	f.Add("-caps\x00read\x00-syscalls\x00read\x00--\x00sh")
	f.Add("-syscalls\x00own\x00-syscalls\x00read\x00--")
	f.Fuzz(func(t *testing.T, joined string) {
		s, argv, err := ParseArgs(strings.Split(joined, "\x00"))
		if err != nil {
			return
		}
		s2, argv2, err := ParseArgs(append(s.Args(), argv...))
		if err != nil || fmt.Sprint(s2, argv2) != fmt.Sprint(s, argv) {
			t.Fatalf("round trip: %v %v %v", s2, argv2, err)
		}
	})
}
