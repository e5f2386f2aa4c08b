package become

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/autoshell/agent/transport"
)

// ErrBecome marks a failure to become the user: sudo refused (a wrong or
// missing password, no sudoers entry, a sudo that wants a terminal) or is
// not installed. It is the host's problem, not the step's: the tools
// return it as an error and the host fails with it.
var ErrBecome = transport.ErrBecome

// prompt is what sudo -S writes on stderr before reading the password; it
// is recognised and removed from error messages.
const prompt = "[agent: sudo password] "

// maxPreamble bounds what sudo may print on stderr before the command's
// marker line (prompts, a lecture); beyond it the marker is not looked for.
const maxPreamble = 64 << 10

// cleanupTimeout bounds the sudo that kills a timed-out command's processes.
const cleanupTimeout = 10 * time.Second

// script runs as the become user: `/bin/sh -c script sh CMD DIR NONCE`.
// With a password, standard input starts with the password line and a
// line holding NONCE: sudo -S reads the password line (one byte at a
// time) when it asks, and the script reads up to the NONCE line, so the
// password never reaches the command — also when sudo did not ask
// (NOPASSWD, a cached credential). Then it prints "NONCE PID STATUS" on
// stderr (PID: its process group, which sudo's use_pty makes its own
// session's; its own PID without /proc), goes to DIR ("~" is the become user's $HOME) and
// evaluates CMD in the same shell, as transport/ssh's wrapper does for the
// login user. %s is where the password lines are skipped.
const script = `%sd=$2; case $d in "~") d=$HOME ;; "~/"*) d=$HOME/${d#"~/"} ;; esac; ` +
	`if [ -n "$d" ] && ! cd -- "$d" 2>/dev/null; then ` +
	`if [ ! -e "$d" ]; then r=noent; elif [ ! -d "$d" ]; then r=notdir; else r=perm; fi; ` +
	`printf '%%s %%s %%s\n' "$3" "$$" "$r" >&2; exit 127; fi; ` +
	`g=$$; IFS=' ' read -r _ _ _ _ g _ </proc/$$/stat 2>/dev/null; ` +
	`printf '%%s %%s ok\n' "$3" "$g" >&2; agent_cmd=$1; shift 3; unset d r; eval "unset agent_cmd
$agent_cmd"`

// skipPassword reads standard input up to the NONCE line.
const skipPassword = `while IFS= read -r agent_l; do [ "$agent_l" = "$3" ] && break; done; unset agent_l; `

// Transport is a host's transport as another user: every command runs
// under `sudo -u USER`, and the file methods go through it too (see
// ReadFile, WriteFile). It does not own the transport it wraps: Close
// does not close it.
type Transport struct {
	inner transport.Transport
	cfg   Config

	homeMu sync.Mutex // held while the home directory is looked up
	// tty: sudo said it must have a terminal (requiretty); every sudo
	// runs under a pseudo-terminal from then on (ptyLine).
	tty    atomic.Bool
	home   string
	mu     sync.Mutex
	closed bool
}

// The transport and its optional capabilities (transport.As). It has no
// Unwrap: its answers are the become user's, never the login user's.
var (
	_ transport.Transport  = (*Transport)(nil)
	_ transport.Becomer    = (*Transport)(nil)
	_ transport.RealPather = (*Transport)(nil)
	_ transport.HomeDirer  = (*Transport)(nil)
	_ transport.DirReader  = (*Transport)(nil)
	_ transport.Inspector  = (*Transport)(nil)
)

// New returns inner as cfg's user. The configuration is validated; no
// command runs until the first call (Check tries sudo once).
func New(inner transport.Transport, cfg Config) (*Transport, error) {
	if cfg.User == "" {
		cfg.User = DefaultUser
	}
	if cfg.Exe == "" {
		cfg.Exe = "sudo"
	}
	if cfg.Flags == nil {
		cfg.Flags = []string{"-H"}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Transport{inner: inner, cfg: cfg}, nil
}

// User is the user the transport acts as.
func (t *Transport) User() string { return t.cfg.User }

// Inner is the login user's transport.
func (t *Transport) Inner() transport.Transport { return t.inner }

// Host is the inner host with User set to the become user.
func (t *Transport) Host() transport.HostInfo {
	h := t.inner.Host()
	h.User = t.cfg.User
	return h
}

// Close marks the transport closed (later calls fail with
// transport.ErrClosed); the inner transport belongs to the caller and stays
// open.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	return nil
}

func (t *Transport) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Check runs sudo once (it finds the become user's home directory) and
// returns its error: a wrong password, a sudo that wants a terminal, no
// sudoers entry. The engine calls it when a host is opened, so that the
// host fails before any step rather than at its first step.
func (t *Transport) Check(ctx context.Context) error {
	_, err := t.HomeDir(ctx)
	return err
}

// HomeDir is the become user's $HOME as sudo sets it (transport.HomeDirer),
// looked up once.
func (t *Transport) HomeDir(ctx context.Context) (string, error) {
	t.homeMu.Lock()
	defer t.homeMu.Unlock()
	if t.home != "" {
		return t.home, nil
	}
	res, err := t.Run(ctx, transport.Command{Command: `printf '%s\n' "$HOME"`})
	if err != nil {
		return "", err
	}
	home := strings.TrimSuffix(res.Stdout, "\n")
	if res.ExitCode != 0 || !strings.HasPrefix(home, "/") || strings.Contains(home, "\n") {
		return "", fmt.Errorf("home directory of %s: $HOME is not an absolute path", t.cfg.User)
	}
	t.home = home
	return home, nil
}

// sudoLine is the command line the login user's shell runs: sudo, then
// /bin/sh running script with cmd, dir and nonce.
func (t *Transport) sudoLine(command, dir, nonce string, wrap ...string) string {
	var b strings.Builder
	b.WriteString(quote(t.cfg.Exe))
	skip := ""
	if t.cfg.Password != "" {
		b.WriteString(" -S -p " + quote(prompt))
		skip = skipPassword
	} else {
		b.WriteString(" -n")
	}
	b.WriteString(" -u " + quote(t.cfg.User))
	for _, f := range t.cfg.Flags {
		b.WriteString(" " + quote(f))
	}
	b.WriteString(" --")
	// A wrapper (a confining launcher) runs between sudo and the shell.
	for _, w := range wrap {
		b.WriteString(" " + quote(w))
	}
	b.WriteString(" /bin/sh -c " + quote(fmt.Sprintf(script, skip)) + " sh " +
		quote(command) + " " + quote(dir) + " " + nonce)
	return b.String()
}

// line is sudoLine, under a pseudo-terminal once sudo asked for one.
func (t *Transport) line(command, dir, nonce string, wrap ...string) string {
	l := t.sudoLine(command, dir, nonce, wrap...)
	if t.tty.Load() {
		return ptyLine(l)
	}
	return l
}

// ptyLine runs line under script(1) (util-linux, in Debian's essential
// bsdutils), which gives it a pseudo-terminal as its controlling
// terminal: what sudo's requiretty checks, as Ansible's ssh -tt gives.
// The line's standard input, output and error stay the session's (fds 3,
// 4, 5 around script): the password still reaches sudo -S on standard
// input only — never the pty's echo, argv or a log — and the command's
// output and error stay apart and exact. script itself reads nothing
// (</dev/null), its copy of the terminal is dropped, and -e makes its
// exit status the line's.
func ptyLine(line string) string {
	return "SHELL=/bin/sh script -qec " + quote(line+" <&3 >&4 2>&5 3<&- 4>&- 5>&-") +
		" /dev/null 3<&0 4>&1 5>&2 </dev/null >/dev/null"
}

// needsTTY says sudo refused for want of a terminal (sudoers requiretty:
// "sorry, you must have a tty to run sudo").
func needsTTY(preamble string) bool {
	return strings.Contains(strings.ToLower(preamble), "must have a tty")
}

// Run runs cmd as the become user, as transport.Transport documents. The
// password goes to sudo on standard input, never on a command line; the
// command itself gets no standard input then (cmd.Stdin must be nil). A
// sudo that refuses is an error wrapping ErrBecome with sudo's message;
// a cmd.Dir the become user cannot enter is a *fs.PathError. On timeout or
// cancellation the command's processes are killed as the become user too
// (the login user cannot signal them).
func (t *Transport) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	if t.isClosed() {
		return transport.Result{}, fmt.Errorf("run as %s: %w", t.cfg.User, transport.ErrClosed)
	}
	nonce := randomHex(8)
	stderr := transport.NewCapture(cmd.CaptureLimit)
	f := &markerFilter{prefix: []byte(nonce + " "), out: transport.Tee(stderr, cmd.Stderr)}
	in := transport.Command{
		Command: t.line(cmd.Command, cmd.Dir, nonce, cmd.Wrap...), Stdin: cmd.Stdin,
		Timeout: cmd.Timeout, CaptureLimit: cmd.CaptureLimit, Stdout: cmd.Stdout, Stderr: f,
	}
	in.Stdin = t.stdin(nonce, cmd.Stdin)
	res, err := t.inner.Run(ctx, in)
	f.flush()
	pid, status, seen := f.result()
	if err != nil {
		if errors.Is(err, transport.ErrTimeout) || ctx.Err() != nil {
			t.kill(nonce, pid)
		}
		if !seen && ctx.Err() == nil && !errors.Is(err, transport.ErrTimeout) {
			return res, err
		}
		res.Stderr, res.StderrBytes = stderr.String(), stderr.Total()
		return res, err
	}
	if !seen {
		// sudo wants a terminal (requiretty): run it again under one. Only
		// when the command has no input of its own, which the refused try
		// may have consumed; Check, with none, finds out first.
		if pre := f.preamble(); needsTTY(pre) && !t.tty.Load() && cmd.Stdin == nil {
			t.tty.Store(true)
			return t.Run(ctx, cmd)
		}
		return transport.Result{}, t.refused(res, f.preamble())
	}
	if status != "ok" {
		return transport.Result{}, dirError(cmd.Dir, status)
	}
	res.Stderr, res.StderrBytes = stderr.String(), stderr.Total()
	return res, nil
}

// stdin is the standard input of sudo: with a password, the password
// line and the NONCE line before the command's own input (see script).
func (t *Transport) stdin(nonce string, r io.Reader) io.Reader {
	if t.cfg.Password == "" {
		return r
	}
	head := strings.NewReader(t.cfg.Password + "\n" + nonce + "\n")
	if r == nil {
		return head
	}
	return io.MultiReader(head, r)
}

// killScript kills, as the become user, the process groups of the
// processes whose command line holds the nonce ($1 is it with its first
// character in brackets, so that pgrep does not find this script), and
// their children; and the process group $2 from the marker. (dash's kill
// takes no "--": "kill -9 -PGID" is what every shell understands.)
const killScript = `ps=$(pgrep -f "$1" 2>/dev/null); ` +
	`for p in $ps; do [ "$p" -gt 1 ] 2>/dev/null || continue; ` +
	`g=$(ps -o pgid= -p "$p" 2>/dev/null | tr -d ' '); ` +
	`if [ -n "$g" ] && [ "$g" -gt 1 ]; then kill -9 "-$g"; fi; pkill -9 -P "$p"; kill -9 "$p"; done 2>/dev/null; ` +
	`[ "$2" -gt 1 ] 2>/dev/null && kill -9 "-$2" 2>/dev/null; true`

// kill ends what a timed-out or cancelled command left running as the
// become user (the login user cannot signal it): every process of its
// group, found by the nonce on its command line, or by the marker's PID.
func (t *Transport) kill(nonce string, pid int) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	n := randomHex(8)
	cmd := "set -- " + quote("["+nonce[:1]+"]"+nonce[1:]) + " " + fmt.Sprint(pid) + "; " + killScript
	t.inner.Run(ctx, transport.Command{Command: t.line(cmd, "", n), Stdin: t.stdin(n, nil)})
}

// refused explains a sudo that did not run the command: its own message
// (prompts removed), and what to do for the usual causes.
func (t *Transport) refused(res transport.Result, text string) error {
	msg := strings.TrimSpace(strings.ReplaceAll(text, prompt, ""))
	if msg == "" {
		msg = strings.TrimSpace(res.Stdout)
	}
	msg = oneLine(msg, 300)
	who := fmt.Sprintf("sudo to %s on %s", t.cfg.User, t.inner.Host().Name)
	var hint string
	switch low := strings.ToLower(msg); {
	case t.tty.Load() && res.ExitCode == 127 && strings.Contains(low, "script"):
		hint = "sudo wants a terminal (requiretty) and the host has no script(1) (util-linux) to give it one"
	case res.ExitCode == 127 || strings.Contains(low, "not found"):
		hint = fmt.Sprintf("%s is not installed or not on the login user's PATH", t.cfg.Exe)
	case strings.Contains(low, "incorrect password") || strings.Contains(low, "sorry, try again"):
		hint = "the become password is wrong"
	case strings.Contains(low, "a password is required") || strings.Contains(low, "no password was provided"):
		hint = "sudo wants a password: give it with --ask-become-pass (-K) or ansible_become_password"
	case needsTTY(low) || strings.Contains(low, "terminal is required"):
		hint = "sudo wants a terminal (requiretty or use of a tty in sudoers) and did not run under the one agent gave it"
	case strings.Contains(low, "not in the sudoers") || strings.Contains(low, "not allowed") || strings.Contains(low, "may not run"):
		hint = fmt.Sprintf("%s may not run commands as %s (sudoers)", t.inner.Host().User, t.cfg.User)
	}
	if hint != "" {
		return fmt.Errorf("%w: %s: %s (sudo said: %s, exit %d)", ErrBecome, who, hint, msg, res.ExitCode)
	}
	return fmt.Errorf("%w: %s: sudo exited %d: %s", ErrBecome, who, res.ExitCode, msg)
}

func dirError(dir, status string) error {
	var err error
	switch status {
	case "noent":
		err = fs.ErrNotExist
	case "notdir":
		err = syscall.ENOTDIR
	default:
		err = fs.ErrPermission
	}
	return &fs.PathError{Op: "chdir", Path: dir, Err: err}
}

// quote quotes s as one word for a POSIX shell.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// oneLine joins s's lines and shortens it to n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// markerFilter holds back stderr until the script's marker line "NONCE
// PID STATUS": what comes before it is sudo's (prompts, messages) and is
// kept aside for errors; what follows is the command's and goes to out.
type markerFilter struct {
	prefix []byte
	out    io.Writer

	mu     sync.Mutex
	buf    []byte
	pre    []byte
	seen   bool
	done   bool
	pid    int
	status string
}

func (f *markerFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		f.out.Write(p)
		return len(p), nil
	}
	f.buf = append(f.buf, p...)
	for {
		i := indexByte(f.buf, '\n')
		if i < 0 {
			break
		}
		line := f.buf[:i]
		if j := indexOf(line, f.prefix); j >= 0 {
			f.parse(string(line[j+len(f.prefix):]))
			f.pre = append(f.pre, line[:j]...)
			f.done, f.seen = true, true
			rest := f.buf[i+1:]
			f.buf = nil
			f.out.Write(rest)
			return len(p), nil
		}
		f.pre = append(f.pre, f.buf[:i+1]...)
		f.buf = f.buf[i+1:]
	}
	if len(f.pre)+len(f.buf) > maxPreamble {
		// No marker in time: whatever this is, it is not sudo's preamble.
		f.pre = append(f.pre, f.buf...)
		f.buf = nil
		f.done = true
	}
	return len(p), nil
}

func (f *markerFilter) parse(rest string) {
	pid, status, _ := strings.Cut(rest, " ")
	fmt.Sscan(pid, &f.pid)
	f.status = status
}

// flush ends the stream: what is held back is sudo's.
func (f *markerFilter) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		f.pre = append(f.pre, f.buf...)
		f.buf = nil
		f.done = true
	}
}

func (f *markerFilter) result() (pid int, status string, seen bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pid, f.status, f.seen
}

func (f *markerFilter) preamble() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pre) > maxPreamble {
		return string(f.pre[:maxPreamble])
	}
	return string(f.pre)
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func indexOf(b, sub []byte) int { return strings.Index(string(b), string(sub)) }
