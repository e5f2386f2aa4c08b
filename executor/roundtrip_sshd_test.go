package executor

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/become"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// tripCounter is a transport decorator that logs every call that goes to
// the host: commands (the become transport's sudo lines among them), file
// reads, writes and stats, and the capabilities it passes on (RealPath,
// HomeDir, ReadDir, Inspect) — each at least one round trip. It has no Unwrap: a
// capability used through it is counted.
type tripCounter struct {
	transport.Transport
	mu  sync.Mutex
	ops []string
}

func (c *tripCounter) log(op string) {
	c.mu.Lock()
	c.ops = append(c.ops, op)
	c.mu.Unlock()
}

// take returns the calls logged since the last take.
func (c *tripCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops := c.ops
	c.ops = nil
	return ops
}

func (c *tripCounter) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	c.log("run " + cmd.Command)
	return c.Transport.Run(ctx, cmd)
}

func (c *tripCounter) ReadFile(ctx context.Context, p string, w io.Writer) (int64, error) {
	c.log("read " + p)
	return c.Transport.ReadFile(ctx, p, w)
}

func (c *tripCounter) WriteFile(ctx context.Context, p string, r io.Reader, perm fs.FileMode) (int64, error) {
	c.log("write " + p)
	return c.Transport.WriteFile(ctx, p, r, perm)
}

func (c *tripCounter) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	c.log("stat " + p)
	return c.Transport.Stat(ctx, p)
}

func (c *tripCounter) RealPath(ctx context.Context, p string) (string, error) {
	c.log("realpath " + p)
	return c.Transport.(transport.RealPather).RealPath(ctx, p)
}

func (c *tripCounter) HomeDir(ctx context.Context) (string, error) {
	c.log("home")
	return c.Transport.(transport.HomeDirer).HomeDir(ctx)
}

func (c *tripCounter) Inspect(ctx context.Context, p string, readMax int64) (transport.Inspection, error) {
	c.log("inspect " + p)
	return c.Transport.(transport.Inspector).Inspect(ctx, p, readMax)
}

func (c *tripCounter) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	c.log("readdir " + p)
	return transport.ReadDir(ctx, c.Transport, p)
}

// sudos are the calls among ops that ran sudo on the host.
func sudos(ops []string) []string {
	var out []string
	for _, op := range ops {
		if strings.HasPrefix(op, "run ") && strings.Contains(op, "sudo") {
			out = append(out, op)
		}
	}
	return out
}

// short shortens each op to one line for a failure message.
func short(ops []string) string {
	var b strings.Builder
	for _, op := range ops {
		b.WriteString("\n\t" + oneLine(op, 2000))
	}
	return b.String()
}

// roundTripHost is real sshd with the sudo test users: the login user
// whose sudo wants a password, counted, and root through become above the
// counter, with a directory each may write in.
type roundTripHost struct {
	login   *tripCounter
	become  *become.Transport
	userDir string // the login user's
	rootDir string // root's alone
}

func newRoundTripHost(t testing.TB) *roundTripHost {
	t.Helper()
	d, s := testenv.StartSudoSSHD(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg, err := sshtr.Resolve(d.Alias, sshtr.ResolveOptions{ConfigFile: d.SSHConfig, User: s.PassUser})
	must(t, err)
	tr, err := sshtr.Dial(ctx, cfg, sshtr.Options{})
	must(t, err)
	t.Cleanup(func() { tr.Close() })
	h := &roundTripHost{login: &tripCounter{Transport: tr}}
	h.become, err = become.New(h.login, become.Config{Password: s.Password})
	must(t, err)
	u, err := user.Lookup(s.PassUser)
	must(t, err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	h.userDir, err = os.MkdirTemp("", "agent-roundtrip-user-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(h.userDir) })
	must(t, os.Chmod(h.userDir, 0o755))
	must(t, os.Chown(h.userDir, uid, gid))
	h.rootDir = t.TempDir()
	must(t, os.Chmod(h.rootDir, 0o700))
	for _, f := range []string{"warm", "conf"} {
		must(t, os.WriteFile(filepath.Join(h.rootDir, f), []byte("a = 1\n"), 0o644))
		p := filepath.Join(h.userDir, f)
		must(t, os.WriteFile(p, []byte("a = 1\n"), 0o644))
		must(t, os.Chown(p, uid, gid))
	}
	return h
}

// executor is an executor on the host, journaled, that runs medium steps
// without asking; with as, every step runs as root through become; with
// perms, within declared permissions (--allow-write) of both directories.
func (h *roundTripHost) executor(t testing.TB, as, perms bool) *Executor {
	j, err := journal.Open(t.TempDir(), "s1", "sshd")
	must(t, err)
	cfg := Config{Transport: h.login, Policy: safety.DefaultPolicy(), Journal: j,
		Approver: safety.NewApprover(safety.ModeMedium, nil)}
	if perms {
		cfg.Permissions = &safety.Permissions{Source: "--allow-write",
			Write: safety.Globs{Limited: true, List: []string{h.rootDir + "/**", h.userDir + "/**"}}}
	}
	if as {
		cfg.Become, cfg.BecomeAll = h.become, true
	}
	return New(cfg)
}

// run runs one step and returns the calls it made on the host.
func (h *roundTripHost) run(t *testing.T, e *Executor, tool string, params map[string]any) []string {
	t.Helper()
	h.login.take()
	r, err := e.RunStep(context.Background(), planner.Step{Tool: tool, Parameters: params})
	ops := h.login.take()
	if err != nil || r.Status != "ok" {
		t.Fatalf("%s %v: %s %v %s%s", tool, params, r.Status, err, r.Observation, short(ops))
	}
	return ops
}

// TestStepRoundTripsSSHD counts what one step costs on real sshd, after a
// first step of the same kind looked up the homes: a journaled medium
// `sed -i` as root through become runs at most 3 sudo commands (its
// files looked up and read ahead for the journal, the command, their state
// after), declared permissions or not; a read_file at most 1 beside its
// read; without become the same sed step makes at most 2 calls on the
// host before its command runs.
func TestStepRoundTripsSSHD(t *testing.T) {
	h := newRoundTripHost(t)
	for _, perms := range []bool{false, true} {
		t.Run(fmt.Sprintf("permissions=%v", perms), func(t *testing.T) { h.count(t, perms) })
	}
}

func (h *roundTripHost) count(t *testing.T, perms bool) {
	for _, f := range []string{"warm", "conf"} {
		must(t, os.WriteFile(filepath.Join(h.rootDir, f), []byte("a = 1\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(h.userDir, f), []byte("a = 1\n"), 0o644))
	}
	sed := func(dir, f string) map[string]any {
		return map[string]any{"command": fmt.Sprintf("sed -i s/1/2/ %s", filepath.Join(dir, f))}
	}

	e := h.executor(t, true, perms)
	h.run(t, e, "execute_command", sed(h.rootDir, "warm"))
	ops := h.run(t, e, "execute_command", sed(h.rootDir, "conf"))
	t.Logf("sed -i as root: %d sudo commands, %d calls:%s", len(sudos(ops)), len(ops), short(ops))
	if n := len(sudos(ops)); n > 3 {
		t.Errorf("a journaled sed -i as root ran %d sudo commands, want at most 3:%s", n, short(sudos(ops)))
	}
	if b, _ := os.ReadFile(filepath.Join(h.rootDir, "conf")); string(b) != "a = 2\n" {
		t.Errorf("sed -i as root left %q", b)
	}

	ops = h.run(t, e, "read_file", map[string]any{"file_path": filepath.Join(h.rootDir, "conf")})
	t.Logf("read_file as root: %d sudo commands, %d calls:%s", len(sudos(ops)), len(ops), short(ops))
	if n := len(sudos(ops)); n > 2 {
		t.Errorf("read_file as root ran %d sudo commands, want its read and at most 1 more:%s", n, short(sudos(ops)))
	}

	e = h.executor(t, false, perms)
	h.run(t, e, "execute_command", sed(h.userDir, "warm"))
	cmd := sed(h.userDir, "conf")["command"].(string)
	ops = h.run(t, e, "execute_command", sed(h.userDir, "conf"))
	before := -1
	for i, op := range ops {
		// (After the prologue that drops the host's secret-named
		// variables: this executor has no kernel confinement.)
		if strings.HasPrefix(op, "run ") && strings.HasSuffix(op, cmd) {
			before = i
			break
		}
	}
	t.Logf("sed -i as the login user: %d calls before it runs, %d in all:%s", before, len(ops), short(ops))
	if before < 0 || before > 2 {
		t.Errorf("a journaled sed -i made %d calls on the host before it ran, want at most 2:%s", before, short(ops))
	}
	if b, _ := os.ReadFile(filepath.Join(h.userDir, "conf")); string(b) != "a = 2\n" {
		t.Errorf("sed -i left %q", b)
	}

	// mkdir -p of a new directory and a file in it (the fan-out plan's
	// third step): the look at the new directory says its parent exists,
	// so the journal needs no look of its own at the parent.
	dir := filepath.Join(h.userDir, fmt.Sprintf("new-%v", perms))
	cmd = fmt.Sprintf("mkdir -p %s && echo x > %s/f", dir, dir)
	ops = h.run(t, e, "execute_command", map[string]any{"command": cmd})
	t.Logf("mkdir -p and a new file in it: %d calls:%s", len(ops), short(ops))
	for _, op := range ops {
		if strings.HasPrefix(op, "run ") && strings.HasSuffix(op, cmd) {
			break
		}
		if op == "stat "+h.userDir {
			t.Errorf("mkdir -p of a new directory looked at its parent again before it ran:%s", short(ops))
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "x\n" {
		t.Errorf("mkdir -p && echo left %q", b)
	}
}

// BenchmarkBecomeStep is what one journaled medium `sed -i` step costs as
// root through become over real sshd (the login user's sudo asks for its
// password every time), and the same step as the login user: the peer.
func BenchmarkBecomeStep(b *testing.B) {
	h := newRoundTripHost(b)
	for _, as := range []bool{true, false} {
		name, dir := "login", h.userDir
		if as {
			name, dir = "become", h.rootDir
		}
		b.Run(name, func(b *testing.B) {
			e := h.executor(b, as, false)
			step := planner.Step{Tool: "execute_command",
				Parameters: map[string]any{"command": "sed -i s/1/2/ " + filepath.Join(dir, "conf")}}
			for b.Loop() {
				r, err := e.RunStep(context.Background(), step)
				if err != nil || r.Status != "ok" {
					b.Fatalf("%s %v %s", r.Status, err, r.Observation)
				}
			}
		})
	}
}
