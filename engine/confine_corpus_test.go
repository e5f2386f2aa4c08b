//go:build corpus

package engine

// Run only with -tags corpus: it runs attack commands for real, as root
// in CI, with the kernel (Landlock, dropped capabilities) alone holding
// them. Two guards: each test re-runs itself inside new network, UTS, IPC,
// PID and mount namespaces (unshare(1); it refuses to run without them),
// so that a bypass cannot take this machine's network down, rename it or
// signal its processes; and it refuses to run unless a confined step has
// lost the system capabilities (the clock has no namespace: a first run
// without them set the clock, the host name and took the network down).
//
// Issue 13's attack corpus and the GTFOBins entries, each run for real as
// if the classifier had rated it safe — the level forced, the classifier
// bypassed — so that the kernel alone holds them: a read-only step changes
// nothing under the scratch home and leaks no secret, locally and over a
// real sshd (and the same corpus through the whole engine, with the
// kernel on and off, is denied by the classifier: executor's
// TestAttacksDenied* and TestCorpusThroughEngine*).

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// killsOthers are corpus entries that signal every process of the user
// (kill -1) or pid 1: the kernel's signal scoping stops them (the attack
// bed's signal test proves it with a victim process), but on a machine
// shared by other work a regression must not take everything down with
// it, so they are not run for real.
var killsOthers = regexp.MustCompile(`\bkill(all)?\b.*(-1\b|\s1$)|\bpkill\b|\bkillall\b`)

// holdCorpus runs every nth corpus entry on tr at the read-only level,
// whatever the classifier says, and checks that nothing under home
// changed and no secret came out.
func holdCorpus(t *testing.T, tr transport.Transport, home string, launcher confine.LauncherFunc, every int) {
	corpustest.Home(t, home)
	if err := os.Mkdir(filepath.Join(home, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	before := corpustest.Tree(t, home)
	c := newConfiner(tr, confinerOptions{Policy: safety.DefaultPolicy(), Launcher: launcher,
		Home: func(context.Context) (string, error) { return home, nil }})
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()
	conf, err := c.Confine(ctx, confine.ReadOnly)
	if ok, why := c.Enforced(); err != nil || !ok {
		t.Fatalf("not enforced: %v %s", err, why)
	}
	// Guard: a confined step must have lost the capabilities that change
	// the system beyond its files, or nothing runs.
	probe := transport.Command{Command: "grep -E '^Cap(Eff|Bnd)' /proc/self/status", Timeout: 10 * time.Second}
	var pres transport.Result
	if conf.Thread != nil {
		if err := conf.Thread.Do(func() { pres, _ = tr.Run(ctx, probe) }); err != nil {
			t.Fatal(err)
		}
	} else {
		probe.Wrap = conf.Wrap
		pres, _ = tr.Run(ctx, probe)
	}
	if err := corpustest.CheckCapsDropped(pres.Stdout); err != nil {
		t.Fatalf("%v: the corpus is not run (%s)", err, pres.Stderr)
	}
	var cmds []string
	for i, e := range corpustest.Attacks(t, home) {
		if i%every == 0 && !killsOthers.MatchString(e.Command) {
			cmds = append(cmds, e.Command)
		}
	}
	// The corpus's network attacks aim at port 5353 on loopback: a
	// read-only step may send nothing there, UDP or TCP.
	heard := corpustest.Listen(t, "5353")
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan string)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cmd := range work {
				c := transport.Command{Command: cmd, Dir: filepath.Join(home, "work"), Timeout: 2 * time.Second, CaptureLimit: 1 << 16}
				var res transport.Result
				var rerr error
				if conf.Thread != nil {
					if err := conf.Thread.Do(func() { res, rerr = tr.Run(ctx, c) }); err != nil {
						t.Errorf("%q: %v", cmd, err)
						continue
					}
				} else {
					c.Wrap = conf.Wrap
					res, rerr = tr.Run(ctx, c)
				}
				_ = rerr // a timeout or failure is fine: what matters is what changed
				for _, s := range corpustest.Secrets {
					if strings.Contains(res.Stdout+res.Stderr, s) {
						mu.Lock()
						t.Errorf("%q leaked a secret: %q", cmd, res.Stdout+res.Stderr)
						mu.Unlock()
					}
				}
			}
		}()
	}
	for _, cmd := range cmds {
		work <- cmd
	}
	close(work)
	wg.Wait()
	corpustest.Same(t, "after the corpus", before, corpustest.Tree(t, home))
	if got := heard(); got != "" {
		t.Errorf("a read-only step reached the loopback listener: %s", got)
	}
	t.Logf("%d corpus entries ran confined read-only; %d files unchanged, no secret out, nothing on port 5353", len(cmds), len(before))
}

// nsEnv marks the test process unshare started; nsNetEnv holds the
// network namespace the test was started in.
const nsEnv, nsNetEnv = "AGENT_CORPUS_NS", "AGENT_CORPUS_HOST_NETNS"

// inNamespaces reports whether the test runs inside its own namespaces
// (then it brings the loopback interface up, for sshd); when not, it runs
// the test again inside them, reports that run's result as its own and
// returns false: the caller returns.
func inNamespaces(t *testing.T) bool {
	t.Helper()
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatalf("no namespaces to run the corpus in (%v): not run", err)
	}
	if os.Getenv(nsEnv) == "1" {
		if host := os.Getenv(nsNetEnv); host == "" || host == self {
			t.Fatalf("still in the network namespace %s: the corpus is not run", self)
		}
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			t.Fatalf("loopback: %v %s", err, out)
		}
		return true
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare(1) not found (util-linux): the corpus is not run outside namespaces")
	}
	cmd := exec.Command(unshare, "--net", "--uts", "--ipc", "--pid", "--fork", "--mount", "--mount-proc",
		os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), nsEnv+"=1", nsNetEnv+"="+self)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	t.Logf("in new namespaces:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the run in new namespaces failed: %v", err)
	}
	return false
}

func TestKernelHoldsCorpusLocal(t *testing.T) {
	needLandlockIn(t)
	if !inNamespaces(t) {
		return
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // agent's rules out of the home compared
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	holdCorpus(t, tr, home, nil, 2)
}

// TestKernelHoldsCorpusSSHD runs every sixth entry over real sshd, through
// the launcher sent there.
func TestKernelHoldsCorpusSSHD(t *testing.T) {
	needLandlockIn(t)
	if !inNamespaces(t) {
		return
	}
	home := t.TempDir()
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + " XDG_STATE_HOME=" + t.TempDir() + "\n"})
	cfg := &sshtr.HostConfig{Alias: "sshd", HostName: "127.0.0.1", Port: d.Port, User: d.User,
		IdentityFiles: []string{d.IdentityFile}, IdentitiesOnly: true, IdentityAgent: "none",
		UserKnownHostsFiles: []string{d.KnownHosts}, StrictHostKeyChecking: "yes"}
	tr, err := sshtr.Dial(context.Background(), cfg, sshtr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	holdCorpus(t, tr, home, confinetest.Launcher(t), 6)
}

func needLandlockIn(t *testing.T) {
	t.Helper()
	if confine.ABI() < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel has no Landlock")
		}
		t.Skip("the kernel has no Landlock")
	}
}
