package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/explain"
	"github.com/autoshell/agent/statedir"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// confinerOptions configure a confiner.
type confinerOptions struct {
	// Policy gives the protected hierarchies (safety.Policy.Protected) and
	// the public files among them.
	Policy safety.Policy
	// Home returns the host's home directory ("~" of the policy).
	Home func(ctx context.Context) (string, error)
	// Require refuses unapproved steps where the host cannot enforce
	// (ErrNotEnforced) instead of running them with the classifier alone.
	Require bool
	// Warn receives, once, why the host does not enforce ("not enforced:
	// kernel 5.4 has no Landlock"); nil: nobody is told.
	Warn func(msg string)
	// Launcher finds the launcher to send to an SSH host; nil: none (SSH
	// hosts are not enforced).
	Launcher confine.LauncherFunc
	// Exe is the local launcher: agent itself (run with confine.LaunchArg), by
	// default os.Executable().
	Exe string
	// LevelsOff confines no level, only the sandbox (Enforcement.Off with
	// --sandbox).
	LevelsOff bool
	// Keep keeps the launcher and the levels' rules on an SSH host between
	// sessions, in agent's state directory there (the default); without
	// it (--ephemeral) they are sent into a directory of the session's own
	// and removed by Close: nothing stays on the host.
	Keep bool
	// Probe, when set, replaces asking the host's kernel for its Landlock
	// ABI (tests simulate a kernel without one). release is the kernel
	// release for messages.
	Probe func(ctx context.Context) (abi int, release string, err error)
	// Launched sets up a launcher as on an SSH host even when the host is
	// this machine: a become user's commands (another user cannot read
	// agent's private rules directory).
	Launched bool
}

// confiner confines the commands of one host's unapproved steps: on first use
// it finds out whether the host can (a Linux kernel with Landlock, a
// launcher for its architecture), and on an SSH host it sends the launcher
// into a private temporary directory, verified by its SHA-256, used for
// every step and removed by Close. It is safe for concurrent use.
type confiner struct {
	tr transport.Transport
	o  confinerOptions

	mu          sync.Mutex
	ready       bool
	err         error    // setup failed: every confined step is refused
	reason      string   // why the host does not enforce ("" when it does)
	partly      string   // why the host enforces with Landlock alone ("" when with seccomp too)
	launcher    []string // argv prefix of the launcher
	dir         string   // the remote launcher's or the session's directory, removed by Close
	made        []string // the directories above dir the set-up made, removed by Close when empty
	sandboxDir  string   // the remote directory of the sandbox's rules
	localDir    string   // the local rules files' directory, removed by Close
	restrictors []*confine.Restrictor
	conf        map[confine.Level]confine.Confinement
	specs       map[string]confine.Spec // by ruleset name: safe, medium, sandbox
	sandbox     *confine.Ruleset        // the sandbox's rules as computed on the host
	cwd, tmp    string                  // the host's working and temporary directories
	home        string
}

// newConfiner returns the confiner of tr's commands. It does no I/O.
func newConfiner(tr transport.Transport, o confinerOptions) *confiner {
	return &confiner{tr: tr, o: o}
}

// Confine returns how the commands of a step at level are confined: not
// at all for confine.None, and for any level on a host that does not
// enforce (then Warn has said so, once) — unless Require is set: then the
// error is ErrNotEnforced. Other errors are the setup's (a launcher that
// could not be sent or verified): the step must not run.
func (h *confiner) Confine(ctx context.Context, level confine.Level) (confine.Confinement, error) {
	sb := h.o.Policy.Sandbox
	if h.o.LevelsOff {
		level = confine.None
	}
	if level == confine.None && !sb.On() {
		return confine.Confinement{}, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ready {
		h.setup(ctx)
		if h.err != nil && ctx.Err() != nil {
			err := h.err
			h.err = nil // interrupted: try again next time
			return confine.Confinement{}, err
		}
		h.ready = true
		if h.reason != "" && h.o.Warn != nil {
			msg := "not enforced: " + h.reason
			if h.o.Require {
				msg += "; unapproved steps are refused (--require-enforcement)"
			} else {
				msg += "; unapproved steps run with the classifier alone"
			}
			if sb.On() && sb.Mode == safety.SandboxBestEffort {
				msg += "; the sandbox is not applied (--sandbox=best-effort)"
			}
			h.o.Warn(msg)
		}
		if h.reason == "" && h.partly != "" && h.o.Warn != nil {
			h.o.Warn(partlyMessage(h.partly, h.o.Require))
		}
	}
	switch {
	case h.err != nil:
		return confine.Confinement{}, h.err
	case h.reason != "" && sb.On() && sb.Mode != safety.SandboxBestEffort:
		return confine.Confinement{}, ConfigError{fmt.Errorf("%w: %s; --sandbox=best-effort runs without it", ErrNoSandbox, h.reason)}
	case h.reason != "" && h.o.Require && level != confine.None:
		return confine.Confinement{}, fmt.Errorf("%w: %s (--require-enforcement)", confine.ErrNotEnforced, h.reason)
	case h.reason != "":
		return confine.Confinement{}, nil
	case h.partly != "" && h.o.Require && level != confine.None:
		return confine.Confinement{}, fmt.Errorf("%w: %s (--require-enforcement)", confine.ErrNotEnforced, h.partly)
	}
	return h.conf[level], nil
}

// partlyMessage is the warning of a host whose kernel has Landlock but
// takes no seccomp filter (why).
func partlyMessage(why string, require bool) string {
	msg := "partly enforced: " + why + "; Landlock holds files, TCP and signals"
	if require {
		return msg + "; unapproved steps are refused (--require-enforcement)"
	}
	return msg + ", the classifier alone UDP and other sockets, metadata changes and other processes' priority and limits"
}

// ErrNoSandbox refuses every command on a host that cannot apply
// --sandbox (no Landlock), unless --sandbox=best-effort.
var ErrNoSandbox = errors.New("the sandbox cannot be applied")

// Enforces reports whether the host holds unapproved steps with the
// kernel (setting the confiner up on first use, as Confine does): when
// not, the executor's classifier stands alone (executor/linkfloor.go).
func (h *confiner) Enforces(ctx context.Context) bool {
	if h.o.LevelsOff {
		return false
	}
	if _, err := h.Confine(ctx, confine.ReadOnly); err != nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err == nil && h.reason == ""
}

// Sandboxed reports whether the operator's sandbox applies.
func (h *confiner) Sandboxed() bool { return h.o.Policy.Sandbox.On() }

// FileBlocked is the observation for a file tool that would read (or, with
// write, write) real — the file's path with its links resolved on the
// host — where the sandbox does not allow it; "" when it may, or when no
// sandbox applies. Call it after Confine.
func (h *confiner) FileBlocked(write bool, real string) string {
	h.mu.Lock()
	rs, home := h.sandbox, h.home
	h.mu.Unlock()
	if rs == nil || rs.Allows(real, write) {
		return ""
	}
	what := "read of "
	if write {
		what = "write to "
	}
	return "[blocked by the sandbox: " + what + explain.Short(real, home) + " outside the allowed paths (" + explain.SandboxAllows(*rs, home) + ")]"
}

// Explain is the observation for a command confined at level whose stderr
// shows a refusal (explain.Kernel); "" when it shows none or the host does
// not enforce.
func (h *confiner) Explain(level confine.Level, stderr string) string {
	if h.o.LevelsOff {
		level = confine.None
	}
	h.mu.Lock()
	s := h.specs[level.String()]
	_, ok := h.conf[level]
	home, sb := h.home, h.sandbox
	h.mu.Unlock()
	if !ok {
		return ""
	}
	if sb != nil {
		if why := explain.Sandbox(*sb, stderr, home, h.realPath); why != "" {
			return why
		}
	}
	return explain.Kernel(level, s, stderr, home)
}

// Enforced reports whether the host confines unapproved steps and, when not,
// why; before the first Wrap it reports false and "".
func (h *confiner) Enforced() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ready && h.err == nil && h.reason == "", h.reason
}

func (h *confiner) setup(ctx context.Context) {
	home, err := h.o.Home(ctx)
	if err != nil {
		h.err = fmt.Errorf("confine: %w", err)
		return
	}
	h.home = home
	h.specs = map[string]confine.Spec{}
	for _, l := range []confine.Level{confine.ReadOnly, confine.NoProtected} {
		h.specs[l.String()] = SpecFor(h.o.Policy, home, l)
	}
	if h.tr.Host().Kind == "local" && !h.o.Launched {
		h.setupLocal(ctx)
	} else {
		h.setupRemote(ctx)
	}
}

// sandboxName is the sandbox's ruleset among the levels'.
const sandboxName = "sandbox"

// stacks names the rulesets each level's commands are confined to (all
// of them: Landlock domains stack), the sandbox's last.
func (h *confiner) stacks() map[confine.Level][]string {
	st := map[confine.Level][]string{confine.ReadOnly: {confine.ReadOnly.String()}, confine.NoProtected: {confine.NoProtected.String()}}
	if h.o.Policy.Sandbox.On() {
		h.specs[sandboxName] = SandboxSpec(h.o.Policy, h.home, h.cwd, h.tmp)
		for l := range st {
			st[l] = append(st[l], sandboxName)
		}
		st[confine.None] = []string{sandboxName}
	}
	return st
}

// SandboxSpec is the --sandbox ruleset on a host whose home, working
// directory and temporary directory are given: writes only under cwd, tmp
// and the allowed paths (p.AllowWrite, --allow-write: "~/…" is home's),
// TCP only with AllowNet, reads everywhere — or, strict, only in the
// system's directories and the allowed paths. A write limit the sandbox
// cannot express (safety.SandboxPath) opens nothing: front ends refuse it
// first (CheckSandbox).
func SandboxSpec(p safety.Policy, home, cwd, tmp string) confine.Spec {
	sb := p.Sandbox
	s := confine.Spec{Net: sb.AllowNet, Devices: devices(p.HarmlessDevices), Caps: confine.CapsNoSystem}
	extra := []string{cwd, tmp}
	for _, g := range p.AllowWrite {
		if w, err := safety.SandboxPath(g); err == nil {
			extra = append(extra, w)
		}
	}
	for _, w := range extra {
		if w == "~" || strings.HasPrefix(w, "~/") {
			w = home + w[1:]
		}
		if w != "" && path.IsAbs(w) {
			s.Writable = append(s.Writable, path.Clean(w))
		}
	}
	if sb.Mode == safety.SandboxStrict {
		s.Readable = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys", "/dev/pts", "/run", "/var/lib", "/nix"}
		s.Public = s.Devices
	}
	return s
}

// SpecFor is the confine.Spec of level l on a host whose home is home, from the
// policy's one list of protected hierarchies.
func SpecFor(p safety.Policy, home string, l confine.Level) confine.Spec {
	pr := p.Protected(home)
	s := confine.Spec{Devices: devices(p.HarmlessDevices)}
	for _, r := range pr.NoRead {
		// /proc/PID/… cannot be a rule (a step's own processes are new
		// PIDs): the classifier alone holds /proc/*/environ. /dev is
		// denied whole below.
		if !strings.HasPrefix(r, "/proc/") && !strings.HasPrefix(r, "/dev/") {
			s.NoRead = append(s.NoRead, r)
		}
	}
	// /dev is read only through the harmless devices and the terminals.
	s.NoRead = append(s.NoRead, "/dev")
	s.Public = append(s.Public, s.Devices...)
	s.Public = append(s.Public, "/dev/pts", "/dev/shm")
	for _, pat := range p.PublicPaths {
		switch {
		case strings.HasPrefix(pat, "~/"):
			s.Public = append(s.Public, home+pat[1:])
		case !strings.Contains(pat, "/") || strings.HasPrefix(pat, "/"):
			s.Public = append(s.Public, pat)
		}
	}
	// Secrets found, not listed: the home's dot-entries but the readable
	// ones, and secret-shaped names a bounded walk of the home finds (the
	// working directory is added where it is known: findIn).
	if home != "/" && path.IsAbs(home) {
		s.HideDots, s.DotsOK = []string{path.Clean(home)}, pr.ReadableDots
		s.FindIn, s.Secrets = []string{path.Clean(home)}, pr.SecretNames
		s.LinksIn = []string{path.Clean(home)}
	}
	// The host's other accounts' homes (/var/lib/postgresql, /home/*):
	// their dot-entries and secret-named entries too (confine/accounts.go).
	s.AccountHomes = true
	s.Caps, s.Syscalls = confine.CapsRead, confine.SyscallsRead
	if l == confine.NoProtected {
		s.Write, s.Net, s.Caps, s.Syscalls = true, true, confine.CapsNoSystem, confine.SyscallsOwn
		for _, r := range pr.NoWrite {
			// The home itself is the user's to write, as the classifier
			// rates it, even where it lies in a system root (/root): its
			// protected entries are listed on their own.
			if r != home && !strings.HasPrefix(home, r+"/") {
				s.NoWrite = append(s.NoWrite, r)
			}
		}
	}
	return s
}

// findIn adds the working directory cwd to the directories s's rules
// search for secrets, unless the home's walk holds it or it is a system
// directory (a step run from /etc must keep reading /etc/ssl/certs/*.pem:
// the policy's SensitivePaths hold the system's secrets).
func findIn(p safety.Policy, s confine.Spec, home, cwd string) confine.Spec {
	cwd = path.Clean(cwd)
	if len(s.Secrets) == 0 || !path.IsAbs(cwd) || cwd == "/" || cwd == home {
		return s
	}
	if !strings.HasPrefix(cwd, home+"/") {
		for _, r := range p.SystemRoots {
			if cwd == r || strings.HasPrefix(cwd, r+"/") {
				return s
			}
		}
	}
	s.FindIn = append(slices.Clone(s.FindIn), cwd)
	return s
}

// devices are the harmless devices a launcher can grant: character
// devices by their path, not the links to a process's own descriptors
// (/dev/stdout, /proc/self/fd/N: pipes and terminals already open are not
// Landlock's to check).
func devices(harmless []string) []string {
	var out []string
	for _, d := range harmless {
		if strings.HasPrefix(d, "/dev/") && !strings.ContainsAny(d, "*?[") && d != "/dev/stdout" && d != "/dev/stderr" && d != "/dev/stdin" {
			out = append(out, d)
		}
	}
	return append(out, "/dev/full")
}

func (h *confiner) setupLocal(ctx context.Context) {
	if runtime.GOOS != "linux" {
		h.reason = "this machine runs " + runtime.GOOS + "; Landlock is Linux's"
		return
	}
	abi, release := confine.ABI(), confine.KernelRelease()
	if h.o.Probe != nil {
		var err error
		if abi, release, err = h.o.Probe(ctx); err != nil {
			h.err = fmt.Errorf("confine: %w", err)
			return
		}
	}
	if abi < 1 {
		h.reason = "kernel " + release + " has no Landlock"
		return
	}
	if !confine.Seccomp() {
		h.partly = noSeccomp(release)
	}
	exe := h.o.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			h.reason = "agent cannot find its own executable to confine commands: " + err.Error()
			return
		}
	}
	h.launcher = []string{exe, confine.LaunchArg}
	// The rules are computed once per session, here; a command starts on
	// a confined thread of agent (no launcher process), or, under a
	// wrapper such as sudo, through the launcher reading them from a file.
	// In agent's state directory, which the policy protects: no
	// unapproved step may rewrite the rules the next ones read (a
	// directory in $TMPDIR could be, by a medium step).
	state, err := statedir.Dir()
	if err == nil {
		err = os.MkdirAll(state, 0o700)
	}
	if err != nil {
		h.err = fmt.Errorf("confine: %w", err)
		return
	}
	dir, err := os.MkdirTemp(state, "confine-")
	if err != nil {
		h.err = fmt.Errorf("confine: %w", err)
		return
	}
	h.localDir = dir
	if h.cwd, err = os.Getwd(); err != nil {
		h.err = fmt.Errorf("confine: working directory: %w", err)
		return
	}
	h.tmp = os.TempDir()
	for _, l := range []confine.Level{confine.ReadOnly, confine.NoProtected} {
		h.specs[l.String()] = findIn(h.o.Policy, h.specs[l.String()], h.home, h.cwd)
	}
	stacks := h.stacks()
	files, rulesets := map[string]string{}, map[string]confine.Ruleset{}
	for name, s := range h.specs {
		rs := confine.Compile(s)
		file := filepath.Join(dir, name+".rules")
		if err := confine.WriteRuleset(file, rs); err != nil {
			h.err = fmt.Errorf("confine: %w", err)
			return
		}
		files[name], rulesets[name] = file, rs
	}
	h.conf = map[confine.Level]confine.Confinement{}
	for l, names := range stacks {
		var rss []confine.Ruleset
		wrap := slices.Clone(h.launcher)
		for _, n := range names {
			rss = append(rss, rulesets[n])
			wrap = append(wrap, confine.RulesFlag, files[n])
		}
		r, err := confine.NewRestrictor(rss...)
		if err != nil {
			h.err = fmt.Errorf("confine: %w", err)
			return
		}
		r.KeepSpare() // a step's thread confined while the step before runs
		r.Reuse()     // … or the thread of the step before, when nothing of it is left
		r.WatchAll()  // a check before each step: every directory watched, none stated
		h.restrictors = append(h.restrictors, r)
		h.conf[l] = confine.Confinement{Thread: r, Wrap: append(wrap, "--")}
	}
	if rs, ok := rulesets[sandboxName]; ok {
		h.sandbox = &rs
	}
}

// noSeccomp says that kernel release takes no seccomp filter (or agent
// has none for its architecture).
func noSeccomp(release string) string {
	return "kernel " + release + " takes no seccomp filter"
}

// remoteTimeout bounds each command of the remote setup and clean-up.
const remoteTimeout = 30 * time.Second

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// cleanup removes the remote directory, if any.
func (h *confiner) cleanup() {
	if h.dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	h.tr.Run(ctx, transport.Command{Command: h.removeCommand(), Timeout: remoteTimeout})
	h.unserve()
	h.dir, h.made = "", nil
}

// unserve gives the transport's worker back to the shell, after the
// launcher's removal (which the launcher's worker runs, unconfined).
func (h *confiner) unserve() {
	if ws, ok := h.tr.(workerServer); ok && h.launcher != nil {
		ws.ServeWorker(nil)
	}
}

// removeCommand removes dir and then, those that are empty, the
// directories the set-up made above it.
func (h *confiner) removeCommand() string {
	cmd := "rm -rf " + shellQuote(h.dir)
	if !h.o.Keep {
		cmd = reapDead(path.Dir(h.dir), h.dir) + cmd // the session directories of runs that died
	}
	if len(h.made) > 0 {
		cmd += " && { rmdir"
		for _, d := range h.made {
			cmd += " " + shellQuote(d)
		}
		cmd += " 2>/dev/null || :; }"
	}
	return cmd
}

// Close removes what the Host sent to the host. The transport must still
// be open; Close does not close it.
func (h *confiner) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.restrictors {
		r.Close()
	}
	h.restrictors = nil
	if h.localDir != "" {
		if err := os.RemoveAll(h.localDir); err != nil {
			return fmt.Errorf("remove the confinement rules: %w", err)
		}
		h.localDir = ""
	}
	if h.dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	res, err := h.tr.Run(ctx, transport.Command{Command: h.removeCommand(), Timeout: remoteTimeout})
	if !h.o.Keep {
		h.unserve()
	}
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return fmt.Errorf("remove the launcher from the host (%s): %w", h.dir, err)
	}
	h.dir, h.made = "", nil
	return nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// realPath is p as it really is on the host (links followed), p when that
// cannot be known.
func (h *confiner) realPath(p string) string {
	rp, ok := transport.As[transport.RealPather](h.tr)
	if !ok {
		return p
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	if real, err := rp.RealPath(ctx, p); err == nil && path.IsAbs(real) {
		return path.Clean(real)
	}
	return p
}
