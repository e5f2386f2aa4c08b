package testenv

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// PodmanImage is the image Podman builds for container tests: a root file
// system of Debian's static busybox and links to it (no registry is
// reachable from the test machines).
const PodmanImage = "localhost/agent-test:1"

// podmanConf is the containers.conf podman needs on these machines: crun
// and the default ulimits fail here; runc with cgroupfs works, rootful and
// rootless.
const podmanConf = `[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
`

// Podman is podman ready to run test containers: the config file every
// podman it starts reads (CONTAINERS_CONF, set in this process's
// environment, and for real sshd sessions through SSHDEnv) and
// PodmanImage, imported once per test binary.
type Podman struct {
	// Conf is the containers.conf path.
	Conf string
}

var (
	podmanOnce sync.Once
	podmanInst *Podman
	podmanErr  error
	podmanSeq  atomic.Int64
)

// StartPodman returns the test binary's Podman, setting it up on first
// use. Without a working podman the test is skipped — or fails when CI is
// "true", so that CI cannot skip container tests silently.
func StartPodman(t testing.TB) *Podman {
	t.Helper()
	podmanOnce.Do(func() { podmanInst, podmanErr = newPodman() })
	if podmanErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("container test cannot run with CI=true: %v", podmanErr)
		}
		t.Skipf("skipping container test: %v", podmanErr)
	}
	return podmanInst
}

func newPodman() (*Podman, error) {
	if _, err := exec.LookPath("podman"); err != nil {
		return nil, fmt.Errorf("podman is not installed (apt-get install podman runc uidmap busybox-static): %w", err)
	}
	if err := checkSubIDs(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agent-podman-")
	if err != nil {
		return nil, err
	}
	p := &Podman{Conf: filepath.Join(dir, "containers.conf")}
	if err := os.WriteFile(p.Conf, []byte(podmanConf), 0o644); err != nil {
		return nil, err
	}
	// Every podman the tests start, through the local transport too,
	// inherits it.
	os.Setenv("CONTAINERS_CONF", p.Conf)
	rootfs, err := busyboxTar()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", "import", "-", PodmanImage)
	cmd.Stdin = bytes.NewReader(rootfs)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("podman import: %v: %s", err, out)
	}
	// Proves that a container can run here, once, with a clear error.
	if out, err := exec.CommandContext(ctx, "podman", "run", "--rm", PodmanImage, "/bin/echo", "podman-ok").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "podman-ok") {
		return nil, fmt.Errorf("podman cannot run a container here: %v: %s", err, out)
	}
	return p, nil
}

// checkSubIDs: rootless podman needs the user's subordinate uid and gid
// ranges (root needs none).
func checkSubIDs() error {
	if os.Geteuid() == 0 {
		return nil
	}
	u, err := user.Current()
	if err != nil {
		return err
	}
	for _, f := range []string{"/etc/subuid", "/etc/subgid"} {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains("\n"+string(b), "\n"+u.Username+":") {
			return fmt.Errorf("rootless podman needs a range for %s in %s (usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s)", u.Username, f, u.Username)
		}
	}
	return nil
}

// busyboxTar is a root file system: /bin/busybox (static) and links to it.
func busyboxTar() ([]byte, error) {
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return nil, fmt.Errorf("no static busybox (apt-get install busybox-static): %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	dirs := []string{"bin/", "etc/", "tmp/", "proc/", "sys/", "dev/", "data/"}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: now}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bb)), ModTime: now}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bb); err != nil {
		return nil, err
	}
	for _, l := range []string{"sh", "echo", "sleep", "cat", "ls", "date", "env", "true"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + l, Linkname: "busybox", ModTime: now}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/passwd", Mode: 0o644, Size: 28, ModTime: now}); err != nil {
		return nil, err
	}
	if _, err := tw.Write([]byte("root:x:0:0:root:/:/bin/sh\n\n\n")); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TickScript is what a test container runs: a line a second ("tick N"),
// and a quick exit on SIGTERM (sh as PID 1 would ignore it).
const TickScript = `trap 'exit 0' TERM; i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 1; done`

// RunContainer starts a detached container of PodmanImage running
// TickScript, with extra `podman run` arguments (-e, -v, …) before the
// image, and removes it when t ends. It returns the container's name,
// unique in the machine.
func (p *Podman) RunContainer(t testing.TB, extra ...string) string {
	t.Helper()
	name := fmt.Sprintf("agent-test-%d-%d", os.Getpid(), podmanSeq.Add(1))
	args := append([]string{"run", "-d", "--name", name}, extra...)
	args = append(args, PodmanImage, "/bin/sh", "-c", TickScript)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "podman", args...).CombinedOutput(); err != nil {
		t.Fatalf("podman run: %v: %s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "podman", "rm", "-f", "-t", "0", name).CombinedOutput(); err != nil {
			t.Logf("podman rm %s: %v: %s", name, err, out)
		}
	})
	return name
}

// SSHDEnv is the sshd_config line that gives a real sshd's sessions the
// podman configuration (with SHLVL=1, the launcher's own SetEnv, which
// this replaces).
func (p *Podman) SSHDEnv() string {
	return "SetEnv SHLVL=1 CONTAINERS_CONF=" + p.Conf + "\n"
}
