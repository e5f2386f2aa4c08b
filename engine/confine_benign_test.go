package engine

// The benign corpus under the kernel (issue 26): the read-only
// diagnostics of safety/testdata/benign.txt that the classifier rates
// safe, run confined at the safe level in a scratch home that holds
// secrets and ordinary dot-files, with the secrets found (the home's
// dot-files, the bounded walk) and without: hiding the found secrets
// must not refuse any of them.

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/safety/corpustest"
	"github.com/autoshell/agent/transport"
	"github.com/autoshell/agent/transport/local"
)

func benignCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../safety/testdata/benign.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	p := safety.DefaultPolicy()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, c, ok := strings.Cut(line, "\t"); ok {
			line = c
		}
		if p.ClassifyCommand(line).Level == safety.Safe {
			out = append(out, line)
		}
	}
	return out
}

func TestBenignCorpusUnderFoundSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benign corpus twice")
	}
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	home := t.TempDir()
	corpustest.Home(t, home)
	for _, f := range []string{".bashrc", ".profile", ".gitconfig", ".config/app/app.conf", "proj/main.go", "proj/data.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(home, f), []byte("benign error\n"), 0o644)
	}
	work := filepath.Join(home, "proj")
	t.Setenv("HOME", home)
	tr, err := local.New()
	if err != nil {
		t.Fatal(err)
	}
	found := findIn(safety.DefaultPolicy(), SpecFor(safety.DefaultPolicy(), home, confine.ReadOnly), home, work)
	listed := found
	listed.HideDots, listed.FindIn = nil, nil
	refused := func(s confine.Spec) map[string]string {
		r, err := confine.NewRestrictor(confine.Compile(s))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		out := map[string]string{}
		for _, cmd := range benignCommands(t) {
			var res transport.Result
			c := transport.Command{Command: cmd, Dir: work, Timeout: 5 * time.Second, CaptureLimit: 1 << 14}
			if err := r.Do(func() { res, _ = tr.Run(context.Background(), c) }); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(res.Stderr, "ermission denied") || strings.Contains(res.Stderr, "peration not permitted") {
				out[cmd] = res.Stderr
			}
		}
		return out
	}
	before, after := refused(listed), refused(found)
	n := len(benignCommands(t))
	var worse []string
	for cmd, stderr := range after {
		if _, ok := before[cmd]; !ok {
			worse = append(worse, cmd+": "+strings.TrimSpace(stderr))
		}
	}
	t.Logf("benign corpus: %d safe commands; refused by the kernel: %d with the listed secrets, %d with the found ones", n, len(before), len(after))
	if len(worse) > 0 {
		t.Errorf("refused only once the secrets are found:\n%s", strings.Join(worse, "\n"))
	}
}
