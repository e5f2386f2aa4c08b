package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// DropbearOptions configure StartDropbear.
type DropbearOptions struct {
	// SFTP puts OpenSSH's sftp-server where Dropbear runs it for the
	// "sftp" subsystem (/usr/lib/sftp-server). Without it the host has no
	// SFTP server, as most Dropbear hosts (routers, appliances, small
	// images): the subsystem request fails.
	SFTP bool
}

// DropbearUID is the login user's user and group ID on a Dropbear host.
const DropbearUID = 4242

// Dropbear is a host as small images have them: Debian's Dropbear sshd in
// a root file system of Debian's static BusyBox (/bin/sh is BusyBox's ash;
// no bash, no OpenSSH, no sudo), chrooted in a mount namespace of its own
// (/dev and /proc of this machine's), listening on a loopback port. Its
// login user is "tester" (DropbearUID) with Host.Home /home/tester, a
// path on the host: Path gives where a host path is on this machine.
// Needs root (chroot and mount) and the packages dropbear-bin and
// busybox-static.
type Dropbear struct {
	Host
	// Root is the host's root file system on this machine.
	Root string

	dir     string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// Path is where the host's absolute path p is on this machine.
func (d *Dropbear) Path(p string) string { return filepath.Join(d.Root, p) }

// WriteFile writes a file at the host's path p, owned by the login user.
func (d *Dropbear) WriteFile(p string, data []byte, mode fs.FileMode) error {
	local := d.Path(p)
	if err := os.WriteFile(local, data, mode); err != nil {
		return err
	}
	if err := os.Chmod(local, mode); err != nil {
		return err
	}
	return os.Lchown(local, DropbearUID, DropbearUID)
}

// Mkdir makes a directory at the host's path p, owned by the login user.
func (d *Dropbear) Mkdir(p string, mode fs.FileMode) error {
	local := d.Path(p)
	if err := os.Mkdir(local, mode); err != nil {
		return err
	}
	if err := os.Chmod(local, mode); err != nil {
		return err
	}
	return os.Lchown(local, DropbearUID, DropbearUID)
}

// Log is what Dropbear logged so far.
func (d *Dropbear) Log() string {
	b, _ := os.ReadFile(d.logPath)
	return string(b)
}

// ErrDropbearNotFound is returned when dropbear, dropbearkey or a static
// busybox is not installed.
var ErrDropbearNotFound = errors.New("dropbear host: not installed")

// DropbearPaths locates dropbear, dropbearkey and the static busybox.
func DropbearPaths() (dropbear, key, busybox string, err error) {
	for _, p := range []struct {
		dst  *string
		name string
		dirs []string
	}{
		{&dropbear, "dropbear", []string{"/usr/sbin", "/usr/local/sbin", "/sbin"}},
		{&key, "dropbearkey", []string{"/usr/bin", "/usr/local/bin"}},
		{&busybox, "busybox", []string{"/bin", "/usr/bin"}},
	} {
		for _, dir := range p.dirs {
			if fi, err := os.Stat(filepath.Join(dir, p.name)); err == nil && fi.Mode().IsRegular() {
				*p.dst = filepath.Join(dir, p.name)
				break
			}
		}
		if *p.dst == "" {
			return "", "", "", fmt.Errorf("%w: no %s (apt-get install dropbear-bin busybox-static)", ErrDropbearNotFound, p.name)
		}
	}
	return dropbear, key, busybox, nil
}

// StartDropbear starts a Dropbear host and stops it when t ends. Skipped
// when not root or not installed — failed instead when CI is "true".
func StartDropbear(t testing.TB, opts DropbearOptions) *Dropbear {
	t.Helper()
	skip := func(err error) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Dropbear host cannot run with CI=true: %v", err)
		}
		t.Skipf("skipping Dropbear host test: %v", err)
	}
	if _, _, _, err := DropbearPaths(); err != nil {
		skip(err)
	}
	if os.Geteuid() != 0 {
		skip(errors.New("needs root (chroot, mount)"))
	}
	d, err := NewDropbear(opts)
	if err != nil {
		t.Fatalf("start dropbear: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close dropbear: %v", err)
		}
	})
	return d
}

// NewDropbear builds the host's root file system and starts Dropbear on a
// free loopback port. Close stops it and removes everything.
func NewDropbear(opts DropbearOptions) (d *Dropbear, err error) {
	dropbear, dropbearkey, busybox, err := DropbearPaths()
	if err != nil {
		return nil, err
	}
	dir, err := tempDir("testenv-dropbear-*")
	if err != nil {
		return nil, err
	}
	d = &Dropbear{dir: dir, Root: filepath.Join(dir, "root"), logPath: filepath.Join(dir, "dropbear.log")}
	d.Alias, d.User, d.Home = "dropbear", "tester", "/home/tester"
	defer func() {
		if err != nil {
			d.Close()
			d = nil
		}
	}()
	if err := d.buildRoot(dropbear, busybox, opts); err != nil {
		return nil, err
	}
	hostKey := d.Path("/etc/dropbear/host_key")
	if out, err := exec.Command(dropbearkey, "-t", "ed25519", "-f", hostKey).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("dropbearkey: %v: %s", err, out)
	}
	pubLine, err := exec.Command(dropbearkey, "-y", "-f", hostKey).Output()
	if err != nil {
		return nil, fmt.Errorf("dropbearkey -y: %w", err)
	}
	for _, line := range strings.Split(string(pubLine), "\n") {
		if strings.HasPrefix(line, "ssh-ed25519 ") {
			if d.HostKey, _, _, _, err = ssh.ParseAuthorizedKey([]byte(line)); err != nil {
				return nil, fmt.Errorf("dropbear host key: %w", err)
			}
		}
	}
	if d.HostKey == nil {
		return nil, fmt.Errorf("dropbearkey -y printed no ed25519 key: %s", pubLine)
	}
	identity, clientPub, err := newClientKey(dir)
	if err != nil {
		return nil, err
	}
	if err := d.Mkdir(d.Home+"/.ssh", 0o700); err != nil {
		return nil, err
	}
	if err := d.WriteFile(d.Home+"/.ssh/authorized_keys", authorizedLine(clientPub, "testenv-client"), 0o600); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		d.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err := writeClientConfig(&d.Host, dir, identity); err != nil {
			return nil, err
		}
		err = d.start(port)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, errSSHDBind) || attempt == sshdBindAttempts {
			return nil, err
		}
	}
}

// buildRoot lays out the root file system: busybox and its links,
// dropbear and the libraries it needs (sftp-server's too, with
// opts.SFTP), /etc's users, the login user's home.
func (d *Dropbear) buildRoot(dropbear, busybox string, opts DropbearOptions) error {
	for _, p := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "usr/lib", "etc/dropbear", "dev", "proc", "run", "root", "home"} {
		if err := os.MkdirAll(d.Path(p), 0o755); err != nil {
			return err
		}
	}
	if err := os.Mkdir(d.Path("tmp"), os.ModeSticky|0o777); err != nil {
		return err
	}
	if err := os.Chmod(d.Path("tmp"), os.ModeSticky|0o777); err != nil {
		return err
	}
	if err := copyFile(busybox, d.Path("/bin/busybox"), 0o755); err != nil {
		return err
	}
	list, err := exec.Command(busybox, "--list-full").Output()
	if err != nil {
		return fmt.Errorf("busybox --list-full: %w", err)
	}
	for _, l := range strings.Fields(string(list)) {
		if l == "bin/busybox" {
			continue
		}
		os.MkdirAll(filepath.Dir(d.Path(l)), 0o755)
		if err := os.Symlink("/bin/busybox", d.Path(l)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	bins := map[string]string{dropbear: "/usr/sbin/dropbear"}
	if opts.SFTP {
		bins["/usr/lib/openssh/sftp-server"] = "/usr/lib/sftp-server"
	}
	for src, dst := range bins {
		if err := copyFile(src, d.Path(dst), 0o755); err != nil {
			return err
		}
		if err := d.copyLibs(src); err != nil {
			return err
		}
	}
	uid := strconv.Itoa(DropbearUID)
	files := map[string]string{
		"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\ntester:*:" + uid + ":" + uid + ":tester:/home/tester:/bin/sh\n",
		"/etc/group":  "root:x:0:\ntester:x:" + uid + ":\n",
		"/etc/shells": "/bin/sh\n",
	}
	for p, s := range files {
		if err := os.WriteFile(d.Path(p), []byte(s), 0o644); err != nil {
			return err
		}
	}
	return d.Mkdir(d.Home, 0o755)
}

// copyLibs copies the shared libraries bin needs (ldd) to the same paths
// in the root.
func (d *Dropbear) copyLibs(bin string) error {
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %w", bin, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if !strings.HasPrefix(f, "/") {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(d.Path(f)), 0o755); err != nil {
				return err
			}
			if err := copyFile(f, d.Path(f), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(src, dst string, mode fs.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

// dropbearScript mounts /dev and /proc in the root (in the mount namespace
// of unshare) and runs dropbear there: in the foreground, logging to
// stderr, no password logins.
const dropbearScript = `mount --rbind /dev "$1/dev" && mount -t proc proc "$1/proc" &&
exec chroot "$1" /usr/sbin/dropbear -F -E -s -p "127.0.0.1:$2" -r /etc/dropbear/host_key -P /run/dropbear.pid`

// start runs dropbear and waits until port answers with its banner.
func (d *Dropbear) start(port int) error {
	logf, err := os.OpenFile(d.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", dropbearScript, "sh", d.Root, strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	logf.Close()
	if err != nil {
		return fmt.Errorf("start dropbear: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	d.cmd, d.exited = cmd, exited
	ctx, cancel := context.WithTimeout(context.Background(), sshdStartTimeout)
	defer cancel()
	for {
		select {
		case <-exited:
			log := d.Log()
			d.cmd = nil
			if strings.Contains(log, "Address already in use") {
				return fmt.Errorf("%w %d; log:\n%s", errSSHDBind, port, log)
			}
			return fmt.Errorf("dropbear exited before listening; log:\n%s", log)
		case <-ctx.Done():
			d.stop()
			return fmt.Errorf("dropbear not ready on port %d; log:\n%s", port, d.Log())
		case <-time.After(20 * time.Millisecond):
		}
		if banner, err := readBanner(ctx, d.Addr); err == nil {
			if strings.HasPrefix(banner, "SSH-2.0-dropbear") {
				return nil
			}
			d.stop()
			return fmt.Errorf("unexpected banner %q on %s", banner, d.Addr)
		}
	}
}

func (d *Dropbear) stop() error {
	if d.cmd == nil {
		return nil
	}
	err := killTree(d.cmd.Process.Pid, 5*time.Second)
	select {
	case <-d.exited:
	case <-time.After(5 * time.Second):
		err = errors.Join(err, fmt.Errorf("dropbear (pid %d) not reaped", d.cmd.Process.Pid))
	}
	d.cmd = nil
	return err
}

// Close stops Dropbear and every process of the host, then removes its
// files (the mounts were the namespace's: gone with its processes).
func (d *Dropbear) Close() error {
	d.closeOnce.Do(func() {
		err := d.stop()
		if mounts, _ := os.ReadFile("/proc/self/mounts"); bytes.Contains(mounts, []byte(d.Root)) {
			err = errors.Join(err, fmt.Errorf("%s still has mounts here: not removed", d.Root))
		} else if rmErr := os.RemoveAll(d.dir); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
		d.closeErr = err
	})
	return d.closeErr
}
