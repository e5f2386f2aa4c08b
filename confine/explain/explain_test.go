package explain

import (
	"strings"
	"testing"

	"github.com/autoshell/agent/confine"
)

// TestKernel: what the kernel's refusals, as commands print them, are
// explained as; anything else is explained as nothing or as a possible
// refusal.
func TestKernel(t *testing.T) {
	home := "/tmp/t/home"
	medium := confine.Spec{Write: true, NoWrite: []string{home + "/.bashrc", home + "/.bash_profile", home + "/.config/agent", "/etc"}}
	safe := confine.Spec{NoRead: []string{home + "/.ssh"}, Syscalls: confine.SyscallsRead}
	mediumSys := medium
	mediumSys.Net, mediumSys.Syscalls = true, confine.SyscallsOwn
	for _, tc := range []struct {
		name   string
		l      confine.Level
		s      confine.Spec
		stderr string
		want   string
	}{
		{"protected file", confine.NoProtected, medium, "sh: 1: cannot create /tmp/t/home/.bash_profile: Permission denied", "[blocked: write to ~/.bash_profile outside what a medium step may do"},
		{"new entry in the home", confine.NoProtected, medium, "mkdir: cannot create directory '/tmp/t/home/app': Permission denied", "[blocked: ~/app cannot be created, removed or renamed by a medium step: ~ holds protected files"},
		{"new entry in ~/.config", confine.NoProtected, medium, "touch: cannot touch '~/.config/x': Permission denied", "[blocked: ~/.config/x cannot be created, removed or renamed by a medium step: ~/.config holds protected files"},
		{"new entry in /", confine.NoProtected, medium, "mkdir: cannot create directory ‘/data’: Permission denied", "[blocked: /data cannot be created, removed or renamed by a medium step: / holds protected files"},
		{"in a subdirectory: not the kernel's rule", confine.NoProtected, medium, "cp: cannot create regular file '/tmp/t/home/work/x': Permission denied", "[note: this step ran confined by the kernel"},
		{"safe write", confine.ReadOnly, safe, "sh: 1: cannot create /tmp/x: Permission denied", "[blocked: write to /tmp/x outside what a safe step may do"},
		{"secret", confine.ReadOnly, safe, "cat: /tmp/t/home/.ssh/id_rsa: Permission denied", "[blocked: read of ~/.ssh/id_rsa"},
		{"signal", confine.ReadOnly, safe, "sh: 1: kill: Operation not permitted", "[blocked: signal to a process outside the step"},
		{"udp", confine.ReadOnly, safe, "bash: socket: Operation not permitted\nbash: line 1: /dev/udp/10.0.0.1/53: Operation not permitted", "[blocked: network connection"},
		{"python socket", confine.ReadOnly, safe, "Traceback …\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nPermissionError: [Errno 1] Operation not permitted", "[blocked: network connection"},
		{"curl", confine.ReadOnly, safe, "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server", "[blocked: network connection"},
		{"curl at medium", confine.NoProtected, mediumSys, "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server", ""},
		{"renice", confine.ReadOnly, safe, "renice: failed to set priority for 4242 (process ID): Operation not permitted", "[blocked: change to another process's priority"},
		{"ionice", confine.NoProtected, mediumSys, "ionice: ioprio_set failed: Operation not permitted", "[blocked: change to another process's priority"},
		{"chrt", confine.NoProtected, mediumSys, "chrt: failed to set pid 4242's policy: Operation not permitted", "[blocked: change to another process's priority"},
		{"taskset", confine.ReadOnly, safe, "pid 4242's current affinity list: 0,1\ntaskset: failed to set pid 4242's affinity: Operation not permitted", "[blocked: change to another process's priority"},
		{"prlimit", confine.ReadOnly, safe, "prlimit: failed to set the NOFILE resource limit: Operation not permitted", "[blocked: change to another process's priority"},
		{"chmod", confine.ReadOnly, safe, "chmod: changing permissions of 'f': Operation not permitted", "[blocked: change to a file's mode"},
		{"chown", confine.ReadOnly, safe, "chown: changing ownership of '/tmp/f': Operation not permitted", "[blocked: change to a file's mode"},
		{"chmod at medium: maybe the filter's", confine.NoProtected, mediumSys, "chmod: changing permissions of '/tmp/t/home/work/x': Operation not permitted", "[note: this step ran confined by the kernel to what a medium step may do: its chmod may not give every user write"},
		{"install -m 666 at medium", confine.NoProtected, mediumSys, "install: cannot change permissions of '/tmp/t/home/work/x': Operation not permitted", "[note: this step ran confined by the kernel to what a medium step may do: its chmod"},
		{"chmod at medium without the filter", confine.NoProtected, medium, "chmod: changing permissions of '/tmp/t/home/work/x': Operation not permitted", "[note: this step ran confined by the kernel to what a medium step may do (no writes"},
		{"no refusal", confine.NoProtected, medium, "ls: cannot access '/x': No such file or directory", ""},
		{"unconfined", confine.None, medium, "mkdir: cannot create directory '/tmp/t/home/app': Permission denied", ""},
		{"the launcher's own message", confine.NoProtected, medium, confine.LaunchPrefix + "not confined, not run: operation not permitted", "[note: "},
		{"no path", confine.NoProtected, medium, "Permission denied", "[note: this step ran confined"},
		{"garbage", confine.NoProtected, medium, "\x00'\"`‘’ permission denied :: / ~ ''", "[note: "},
	} {
		got := Kernel(tc.l, tc.s, tc.stderr, home)
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: Kernel(%q) = %q, want %q…", tc.name, tc.stderr, got, tc.want)
		}
	}
}

func FuzzKernel(f *testing.F) {
	f.Add("mkdir: cannot create directory '/tmp/t/home/app': Permission denied", "/tmp/t/home")
	f.Add("sh: 1: kill: Operation not permitted", "/")
	f.Add("cat: ~/.ssh/id_rsa: Permission denied", "")
	f.Add("renice: failed to set priority for 4242 (process ID): Operation not permitted", "")
	s := confine.Spec{Syscalls: confine.SyscallsRead, Write: true, NoWrite: []string{"/tmp/t/home/.bashrc", "/etc"}, NoRead: []string{"/tmp/t/home/.ssh"}}
	f.Fuzz(func(t *testing.T, stderr, home string) {
		for _, l := range []confine.Level{confine.None, confine.ReadOnly, confine.NoProtected} {
			got := Kernel(l, s, stderr, home)
			if got != "" && !strings.HasPrefix(got, "[blocked: ") && !strings.HasPrefix(got, "[note: ") {
				t.Fatalf("Kernel(%q) = %q", stderr, got)
			}
		}
	})
}
