package engine_test

// Issue 13's attack corpus and the GTFOBins entries through the whole
// engine (engine.Open, RunPlan: classifier, approver, confiner, executor),
// with the kernel enforcement on and, separately, off (the classifier
// alone), each entry a one-step plan without a terminal: by default and at
// --approve medium every attack is denied, and nothing under the scratch
// home changes — locally and over real sshd. The corpus's medium entries
// (rated medium on purpose: an unknown variable, an alias, a write to an
// ordinary file) run for real at --approve medium only with the kernel on,
// after a confined medium step showed the system capabilities gone: they
// must leave the protected files as they were and leak no secret. Without
// the kernel they are only classified: run for real as root, unconfined,
// a bypass could change this machine.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine/confinetest"
	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
)

// corpusDir is package safety's testdata, found before a test changes
// its working directory.
var corpusDir, _ = filepath.Abs("../safety/testdata")

// engineCorpus reads the corpus aimed at home: the entries that must be
// high, and the medium ones.
func engineCorpus(t *testing.T, home string) (high, medium []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "attacks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		class, cmd, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(class, "#") {
			continue
		}
		cmd = strings.ReplaceAll(cmd, "/home/u", home)
		if strings.HasPrefix(class, "medium") {
			medium = append(medium, cmd)
		} else {
			high = append(high, cmd)
		}
	}
	b, err := os.ReadFile(filepath.Join(corpusDir, "gtfobins.json"))
	if err != nil {
		t.Fatal(err)
	}
	var es []struct{ Code string }
	if err := json.Unmarshal(b, &es); err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		high = append(high, strings.ReplaceAll(e.Code, "/home/u", home))
	}
	return high, medium
}

// corpusHome fills home with what the attacks aim at; it returns the
// secrets no output may hold.
func corpusHome(t *testing.T, home string) []string {
	t.Helper()
	for name, content := range map[string]string{
		".bashrc": "# rc\n", ".profile": "# profile\n", ".ssh/authorized_keys": "ssh-ed25519 AAAA ok\n",
		".ssh/id_rsa": "-----BEGIN PRIVATE KEY-----\nSECRET-SSH-KEY-5b2d\n", ".aws/credentials": "[default]\naws_secret_access_key = SECRET-AWS-0e4f\n",
		".config/agent/config.yaml": "safety: {}\n", ".local/state/agent/audit.log": "{}\n",
		"important/a.txt": "keep\n", "important/x.sh": "#!/bin/sh\nrm -rf \"$HOME/important\"\n",
	} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"SECRET-SSH-KEY-5b2d", "SECRET-AWS-0e4f"}
}

// homeTree records every file, directory and link under root.
func homeTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s: %s changed: %q → %q", what, p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// corpusThroughEngine runs the corpus through open's hosts.
func corpusThroughEngine(t *testing.T, home string, open func(engine.HostOptions) (*engine.Host, error), launcher func(string) ([]byte, error)) {
	secrets := corpusHome(t, home)
	before := homeTree(t, home)
	high, labelled := engineCorpus(t, home)
	p := safety.DefaultPolicy()
	// A medium entry the classifier now rates high is an attack like the
	// others; none may be rated safe.
	var medium []string
	for _, cmd := range labelled {
		switch a := p.ClassifyCommandAt(cmd, home); a.Level {
		case safety.High:
			high = append(high, cmd)
		case safety.Medium:
			medium = append(medium, cmd)
		default:
			t.Errorf("%q = %s, want at least medium", cmd, a)
		}
	}
	var run []string
	for _, cmd := range high {
		// Guard: an attack the classifier lets through is a failure here,
		// and is not run for real.
		if a := p.ClassifyCommandAt(cmd, home); a.Level != safety.High {
			t.Errorf("%q = %s, want high (not run)", cmd, a)
			continue
		}
		run = append(run, cmd)
	}
	for _, kernel := range []string{"on", "off"} {
		e := engine.Enforcement{Off: kernel == "off", Launcher: launcher}
		for _, mode := range []safety.Mode{safety.DefaultMode(false), safety.ModeMedium} {
			var log eventLog
			h, err := open(engine.HostOptions{Policy: p, Approver: safety.NewApprover(mode, nil), Enforcement: e, Emit: log.Emit})
			if err != nil {
				t.Fatal(err)
			}
			for _, cmd := range run {
				sum, err := h.RunPlan(context.Background(), &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "attack", Steps: []planner.Step{shellStep(cmd)}}}})
				if err != nil || sum.Denied != 1 || sum.OK != 0 || sum.Errors != 0 {
					t.Errorf("kernel %s, --approve %s: %q: %+v %v, want denied", kernel, mode, cmd, sum, err)
				}
			}
			h.Close()
			sameTree(t, fmt.Sprintf("kernel %s, --approve %s", kernel, mode), before, homeTree(t, home))
		}
	}
	t.Logf("%d attacks denied by default and at --approve medium, kernel on and off", len(run))

	// The medium entries run for real only confined.
	var log eventLog
	h, err := open(engine.HostOptions{Policy: p, Approver: safety.NewApprover(safety.ModeMedium, nil),
		Enforcement: engine.Enforcement{Require: true, Launcher: launcher}, Emit: log.Emit})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// Guard: a confined medium step (FOO=1 makes it medium) must have lost
	// the capabilities that change the system beyond its files (time,
	// admin, network admin, raw sockets, boot, modules, syslog).
	h.RunPlan(context.Background(), &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "probe",
		Steps: []planner.Step{shellStep("FOO=1 grep -E '^Cap(Eff|Bnd)' /proc/self/status")}}}})
	var probe string
	for _, ev := range log.all() {
		if ev.Step != nil {
			probe = ev.Step.Output
		}
	}
	if !strings.Contains(probe, "CapBnd") {
		t.Fatalf("the probe step read no capabilities (%q): the medium entries are not run", probe)
	}
	for _, l := range strings.Split(probe, "\n") {
		if _, v, ok := strings.Cut(l, "Cap"); ok && strings.Contains(v, ":") {
			_, hex, _ := strings.Cut(v, ":")
			var n uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(hex), "%x", &n); err != nil || n&(1<<25|1<<21|1<<12|1<<13|1<<22|1<<16|1<<34) != 0 {
				t.Fatalf("a confined medium step still holds system capabilities (%q): the medium entries are not run", probe)
			}
		}
	}
	protected := map[string]string{}
	for p, v := range before {
		if !strings.HasPrefix(p, filepath.Join(home, "important")) {
			protected[p] = v
		}
	}
	for _, cmd := range medium {
		h.RunPlan(context.Background(), &planner.Plan{Phases: []planner.Phase{{Phase: 1, Goal: "medium", Steps: []planner.Step{shellStep(cmd)}}}})
	}
	for _, ev := range log.all() {
		if ev.Step == nil {
			continue
		}
		if ev.Step.Description == "" && ev.Step.Command != "" {
			out, _, _ := strings.Cut(strings.TrimSpace(ev.Step.Output), "\n")
			t.Logf("medium %q: %s (%s) %.100s", ev.Step.Command, ev.Step.Status, ev.Step.Risk, out)
		}
		for _, s := range secrets {
			if strings.Contains(ev.Step.Output, s) {
				t.Errorf("%q leaked a secret: %q", ev.Step.Command, ev.Step.Output)
			}
		}
	}
	after := homeTree(t, home)
	for p, v := range protected {
		if after[p] != v {
			t.Errorf("a medium entry changed %s: %q → %q", p, v, after[p])
		}
	}
	t.Logf("%d medium entries ran confined at --approve medium: protected files unchanged, no secret out", len(medium))
}

func TestCorpusThroughEngineLocal(t *testing.T) {
	needLandlock(t)
	localState(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	// Commands start in the working directory: the scratch one, not the
	// package's (a medium entry may write an ordinary file there).
	t.Chdir(t.TempDir())
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), engine.Target{Connection: engine.ConnLocal}, engine.DialOptions{}, o)
	}
	corpusThroughEngine(t, home, open, nil)
}

func TestCorpusThroughEngineSSHD(t *testing.T) {
	needLandlock(t)
	home := t.TempDir()
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "SetEnv SHLVL=1 HOME=" + home + " TMPDIR=" + t.TempDir() + "\n"})
	t.Setenv("SSH_AUTH_SOCK", "")
	localState(t)
	target, err := engine.HostTarget(d.Alias, engine.SSHOverrides{ConfigFile: d.SSHConfig})
	if err != nil {
		t.Fatal(err)
	}
	open := func(o engine.HostOptions) (*engine.Host, error) {
		return engine.Open(context.Background(), target, engine.DialOptions{}, o)
	}
	corpusThroughEngine(t, home, open, confinetest.Launcher(t))
}
