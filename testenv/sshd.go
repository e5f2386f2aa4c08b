package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SSHDOptions configure NewSSHD.
type SSHDOptions struct {
	// ExtraConfig holds sshd_config lines appended to the generated file.
	// sshd keeps the first value it reads for a keyword, so the launcher
	// leaves out its own default for every keyword ExtraConfig sets before
	// its first "Match" line — except ListenAddress, Port, HostKey and
	// PidFile, which the launcher owns.
	ExtraConfig string
}

// sshdStartTimeout bounds waiting for sshd to listen and answer.
const sshdStartTimeout = 10 * time.Second

// sshdBindAttempts is how often NewSSHD picks a new port when sshd cannot
// bind the one it was given (another process took it meanwhile).
const sshdBindAttempts = 5

var errSSHDBind = errors.New("sshd could not bind its port")

// SSHD is a real OpenSSH sshd on 127.0.0.1 started by NewSSHD, with a
// generated host key and one authorised client key (Host.IdentityFile).
//
// Host.User is the current OS user and Host.Home that user's real home
// directory (os/user): sshd logs in as the user running the tests and runs
// commands with that user's login shell. Tests must work in scratch
// directories under Home that they create and remove themselves
// (t.Cleanup), never in Home itself. Sessions get SHLVL=1 (SetEnv) so that
// bash does not source the user's ~/.bashrc; login shells other than bash
// may still read their startup files.
type SSHD struct {
	Host

	dir     string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when sshd exited and was reaped

	mu       sync.Mutex
	finalLog string
	closed   bool

	closeOnce sync.Once
	closeErr  error
}

// SSHDPath locates OpenSSH's sshd: on PATH, then in the usual sbin
// directories. The error wraps ErrSSHDNotFound when there is none.
func SSHDPath() (string, error) {
	if p, err := exec.LookPath("sshd"); err == nil {
		return filepath.Abs(p) // sshd re-executes itself and needs an absolute path
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w on PATH or in /usr/sbin (install openssh-server)", ErrSSHDNotFound)
}

// StartSSHD starts an SSHD and stops it when t ends. When sshd is not
// installed the test is skipped — or fails, when the CI environment
// variable is "true", so that CI cannot skip real-sshd tests silently.
func StartSSHD(t testing.TB, opts SSHDOptions) *SSHD {
	t.Helper()
	if _, err := SSHDPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real sshd test cannot run with CI=true: %v", err)
		}
		t.Skipf("skipping real sshd test: %v", err)
	}
	d, err := NewSSHD(opts)
	if err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close sshd: %v", err)
		}
	})
	return d
}

// NewSSHD starts sshd -D on a free loopback port and waits until it answers
// with an SSH banner. Close stops it.
func NewSSHD(opts SSHDOptions) (d *SSHD, err error) {
	sshd, err := SSHDPath()
	if err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation directory, normally made by the
		// service unit.
		if err := os.Mkdir("/run/sshd", 0o755); err == nil {
			os.Chmod("/run/sshd", 0o755)
		} else if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create sshd privilege separation dir: %w", err)
		}
	}
	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("current user: %w", err)
	}
	dir, err := tempDir("testenv-sshd-*")
	if err != nil {
		return nil, err
	}
	d = &SSHD{dir: dir, logPath: filepath.Join(dir, "sshd.log")}
	d.Alias, d.User, d.Home = "sshd", u.Username, u.HomeDir
	defer func() {
		if err != nil {
			d.Close()
			d = nil
		}
	}()

	hostSigner, hostPriv, err := newSigner()
	if err != nil {
		return nil, err
	}
	d.HostKey = hostSigner.PublicKey()
	hostKeyPath := filepath.Join(dir, "ssh_host_ed25519_key")
	if err := writeKeyPair(hostKeyPath, hostPriv, "testenv-sshd"); err != nil {
		return nil, err
	}
	identity, clientPub, err := newClientKey(dir)
	if err != nil {
		return nil, err
	}
	authKeys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authKeys, authorizedLine(clientPub, "testenv-client"), 0o600); err != nil {
		return nil, fmt.Errorf("write authorized_keys: %w", err)
	}

	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		d.Addr = net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
		if err := writeClientConfig(&d.Host, dir, identity); err != nil {
			return nil, err
		}
		cfg := sshdConfig(port, dir, hostKeyPath, authKeys, opts.ExtraConfig)
		cfgPath := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return nil, fmt.Errorf("write sshd_config: %w", err)
		}
		err = d.start(sshd, cfgPath, port)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, errSSHDBind) || attempt == sshdBindAttempts {
			return nil, err
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// sshdConfig builds the sshd_config text.
func sshdConfig(port int, dir, hostKey, authKeys, extra string) string {
	// Keywords ExtraConfig sets outside Match blocks replace our defaults.
	set := map[string]bool{}
	for _, line := range strings.Split(extra, "\n") {
		f := strings.Fields(strings.ReplaceAll(line, "=", " "))
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		kw := strings.ToLower(f[0])
		if kw == "match" {
			break
		}
		set[kw] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# written by testenv.NewSSHD\nListenAddress 127.0.0.1\nPort %d\nHostKey %s\nPidFile %s\n",
		port, hostKey, filepath.Join(dir, "sshd.pid"))
	defaults := [][2]string{
		{"AuthorizedKeysFile", authKeys},
		{"PasswordAuthentication", "no"},
		{"KbdInteractiveAuthentication", "no"},
		{"UsePAM", "no"},
		{"StrictModes", "no"},
		{"PermitRootLogin", "prohibit-password"},
		{"LogLevel", "VERBOSE"},
		{"Subsystem", "sftp internal-sftp"},
		// bash sources ~/.bashrc (and /etc/bash.bashrc) for commands run by
		// sshd when SHLVL < 2; the tester's dotfiles would make command
		// output depend on the machine. SHLVL=1 turns that off.
		{"SetEnv", "SHLVL=1"},
	}
	for _, kv := range defaults {
		if !set[strings.ToLower(kv[0])] {
			fmt.Fprintf(&b, "%s %s\n", kv[0], kv[1])
		}
	}
	if extra != "" {
		b.WriteString(extra)
		if !strings.HasSuffix(extra, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// start runs sshd and waits until it listens on port and sends its banner.
func (d *SSHD) start(sshd, cfgPath string, port int) error {
	var logStart int // this attempt's part of the log starts here
	if fi, err := os.Stat(d.logPath); err == nil {
		logStart = int(fi.Size())
	}
	logf, err := os.OpenFile(d.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open sshd log: %w", err)
	}
	cmd := exec.Command(sshd, "-D", "-e", "-f", cfgPath)
	cmd.Dir = d.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	logf.Close() // sshd and its children hold their own copies
	if err != nil {
		return fmt.Errorf("start %s: %w", sshd, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	d.mu.Lock()
	d.cmd, d.exited = cmd, exited
	d.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), sshdStartTimeout)
	defer cancel()
	if err := d.waitReady(ctx, port, logStart, cmd, exited); err != nil {
		d.stop()
		return err
	}
	return nil
}

// waitReady waits until sshd's log says it listens on port and the port
// answers with an OpenSSH banner.
func (d *SSHD) waitReady(ctx context.Context, port, logStart int, cmd *exec.Cmd, exited <-chan struct{}) error {
	listening := fmt.Sprintf("Server listening on 127.0.0.1 port %d.", port)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		log := d.Log()
		if len(log) >= logStart {
			log = log[logStart:]
		}
		select {
		case <-exited:
			if strings.Contains(log, "Address already in use") {
				return fmt.Errorf("%w %d; log:\n%s", errSSHDBind, port, d.Log())
			}
			return fmt.Errorf("sshd exited (%v) before listening; log:\n%s", cmd.ProcessState, d.Log())
		case <-ctx.Done():
			return fmt.Errorf("sshd not ready on port %d: %w; log:\n%s", port, ctx.Err(), log)
		case <-tick.C:
		}
		if !strings.Contains(log, listening) {
			continue
		}
		banner, err := readBanner(ctx, d.Addr)
		if err == nil && strings.HasPrefix(banner, "SSH-2.0-OpenSSH") {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("unexpected banner %q", banner)
		}
		return fmt.Errorf("sshd on %s: %w; log:\n%s", d.Addr, err, d.Log())
	}
}

// readBanner connects to addr and returns the first line the server sends.
func readBanner(ctx context.Context, addr string) (string, error) {
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("dial: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetReadDeadline(dl)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read banner: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// Log returns what sshd has logged so far (after Close: everything it
// logged), for failure messages.
func (d *SSHD) Log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return d.finalLog
	}
	b, err := os.ReadFile(d.logPath)
	if err != nil {
		return fmt.Sprintf("(sshd log unavailable: %v)", err)
	}
	return string(b)
}

// stop kills sshd, its per-connection processes and their sessions, and
// reaps sshd.
func (d *SSHD) stop() error {
	d.mu.Lock()
	cmd, exited := d.cmd, d.exited
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return nil
	}
	err := killTree(cmd.Process.Pid, 5*time.Second)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		return errors.Join(err, fmt.Errorf("sshd (pid %d) not reaped after SIGKILL", cmd.Process.Pid))
	}
	return err
}

// Close stops sshd and every process it started (connections, sessions and
// the commands they run), then removes the temporary files. It is
// idempotent.
func (d *SSHD) Close() error {
	d.closeOnce.Do(func() {
		err := d.stop()
		log := d.Log()
		d.mu.Lock()
		d.finalLog, d.closed = log, true
		d.mu.Unlock()
		if rmErr := os.RemoveAll(d.dir); rmErr != nil {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", d.dir, rmErr))
		}
		d.closeErr = err
	})
	return d.closeErr
}
