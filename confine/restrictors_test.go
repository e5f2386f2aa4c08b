package confine

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// levels is a home's safe and medium rules (home).
func levels(t testing.TB, h string, safe Spec) (Ruleset, Ruleset) {
	medium := safe
	medium.Write, medium.Net = true, true
	return Compile(safe), Compile(medium)
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestNewRestrictorsConfineAsAlone: restrictors built together, their
// paths opened once, confine each to its own rules — the safe level
// reads and writes nothing it may not, the medium one writes but reads
// no secret and writes no protected file — and leave no descriptor open
// but their rulesets'.
func TestNewRestrictorsConfineAsAlone(t *testing.T) {
	needLandlock(t)
	h, spec := home(t, ReadOnly)
	safe, medium := levels(t, h, spec)
	// Built apart, each restrictor holds its rulesets' descriptors and
	// its notifier's; built together, no more (the paths' hundreds are
	// closed).
	before := openFDs(t)
	var apart int
	{
		a, err := NewRestrictor(safe)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewRestrictor(medium)
		if err != nil {
			t.Fatal(err)
		}
		apart = openFDs(t) - before
		a.Close()
		b.Close()
	}
	rs, err := NewRestrictors([]Ruleset{safe}, []Ruleset{medium})
	if err != nil {
		t.Fatal(err)
	}
	if n := openFDs(t) - before; n != apart || n > 8 {
		t.Errorf("%d descriptors left open by the build together, %d apart", n, apart)
	}
	run := func(r *Restrictor, script string) (string, error) {
		var out []byte
		var rerr error
		if err := r.Do(func() { out, rerr = exec.Command("/bin/sh", "-c", script).CombinedOutput() }); err != nil {
			t.Fatal(err)
		}
		return string(out), rerr
	}
	for i, r := range rs {
		if out, err := run(r, "cat "+h+"/work/notes"); err != nil || out != "notes" {
			t.Errorf("level %d: a read: %q, %v", i, out, err)
		}
		if out, err := run(r, "cat "+h+"/.ssh/id_rsa"); err == nil || strings.Contains(out, "SECRET") {
			t.Errorf("level %d read the secret: %q", i, out)
		}
		if _, err := run(r, "echo x >> "+h+"/.bashrc"); err == nil {
			t.Errorf("level %d wrote a protected file", i)
		}
	}
	if _, err := run(rs[0], "echo x > "+h+"/work/safe"); err == nil {
		t.Error("the safe level wrote")
	}
	if out, err := run(rs[1], "echo x > "+h+"/work/medium"); err != nil {
		t.Errorf("the medium level could not write: %q, %v", out, err)
	}
	for _, r := range rs {
		r.Close()
	}
	if n := openFDs(t); n > before {
		t.Errorf("%d descriptors open after Close, %d before", n, before)
	}
}

// TestServeBatchBuildsLevelsTogether: a batch whose commands go from the
// safe level to medium (the fan-out plan's) runs each at its own level
// when the served worker builds both levels' rules at the first command.
func TestServeBatchBuildsLevelsTogether(t *testing.T) {
	needLandlock(t)
	h, spec := home(t, ReadOnly)
	safe, medium := levels(t, h, spec)
	dir := t.TempDir()
	files := map[string]string{"safe": filepath.Join(dir, "safe.rules"), "medium": filepath.Join(dir, "medium.rules")}
	if err := WriteRuleset(files["safe"], safe); err != nil {
		t.Fatal(err)
	}
	if err := WriteRuleset(files["medium"], medium); err != nil {
		t.Fatal(err)
	}
	self := []string{os.Args[0], LaunchArg}
	wrap := func(level string) []string { return append(slices.Clone(self), RulesFlag, files[level], "--") }
	s := serve(t)
	var req strings.Builder
	steps := []struct{ level, cmd string }{
		{"safe", "cat work/notes >/dev/null"},
		{"safe", "! cat .ssh/id_rsa && ! echo x > work/safe"},
		{"medium", "echo y > work/medium && ! cat .ssh/id_rsa && ! echo x >> .bashrc"},
		{"safe", "echo z > work/safe2"}, // fails: the batch ends here
	}
	for i, st := range steps {
		next := "1"
		if i > 0 {
			next = BatchedPrefix + "1"
		}
		nonce := "lv" + strings.Repeat("x", i+1)
		req.WriteString(nonce + " - " + next + " " + quoteRequest(append([]string{st.cmd, h, "PID" + nonce}, wrap(st.level)...)...) + "\n")
	}
	if _, err := io.WriteString(s.in, req.String()); err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		got := s.marker("lv" + strings.Repeat("x", i+1))
		if ok := got == ":0:0"; ok != (i < 3) {
			t.Errorf("step %d (%s: %s): marker %q", i+1, st.level, st.cmd, got)
		}
	}
	for f, want := range map[string]bool{"work/medium": true, "work/safe": false, "work/safe2": false} {
		if _, err := os.Stat(filepath.Join(h, f)); (err == nil) != want {
			t.Errorf("%s there: %v, want %v", f, err == nil, want)
		}
	}
}

// BenchmarkNewRestrictors: the served worker's two levels built one after
// the other (NewRestrictor each) and together (NewRestrictors: each path
// opened once). AGENT_BENCH_RULES=DIR takes a host's kept rules files
// (DIR/*.safe.rules and DIR/*.medium.rules).
func BenchmarkNewRestrictors(b *testing.B) {
	if ABI() < 1 {
		b.Skip("no Landlock")
	}
	home, _ := os.UserHomeDir()
	spec := Spec{NoRead: []string{home + "/.ssh", home + "/.aws", "/etc/shadow"}, Public: []string{"*.pub"},
		NoWrite: []string{home + "/.bashrc", home + "/.ssh", "/etc", "/usr"}, Secrets: []string{"*.key", ".env*"}, FindIn: []string{home}}
	safe, medium := levels(b, home, spec)
	if d := os.Getenv("AGENT_BENCH_RULES"); d != "" {
		for _, l := range []struct {
			rs  *Ruleset
			pat string
		}{{&safe, "*.safe.rules"}, {&medium, "*.medium.rules"}} {
			m, _ := filepath.Glob(filepath.Join(d, l.pat))
			if len(m) == 0 {
				b.Fatalf("no %s in %s", l.pat, d)
			}
			rs, err := ReadRuleset(m[0])
			if err != nil {
				b.Fatal(err)
			}
			*l.rs = rs
		}
	}
	b.Logf("rules: safe %d, medium %d", len(safe.Rules), len(medium.Rules))
	b.Run("apart", func(b *testing.B) {
		for b.Loop() {
			for _, rs := range []Ruleset{safe, medium} {
				r, err := NewRestrictor(rs)
				if err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
		}
	})
	b.Run("together", func(b *testing.B) {
		for b.Loop() {
			rs, err := NewRestrictors([]Ruleset{safe}, []Ruleset{medium})
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range rs {
				r.Close()
			}
		}
	})
}

// TestRestrictorBuildsQueuedLevels: the served worker's first confined
// request builds the rules of the requests queued behind it (a batch's
// other level) at once, and only those of this launcher's confinement,
// each once; a request still coming (a partial line) is left alone.
func TestRestrictorBuildsQueuedLevels(t *testing.T) {
	needLandlock(t)
	h, spec := home(t, ReadOnly)
	safe, medium := levels(t, h, spec)
	dir := t.TempDir()
	sf, mf := filepath.Join(dir, "safe.rules"), filepath.Join(dir, "medium.rules")
	if err := WriteRuleset(sf, safe); err != nil {
		t.Fatal(err)
	}
	if err := WriteRuleset(mf, medium); err != nil {
		t.Fatal(err)
	}
	self := []string{"/x/agent-launch", "-serve"}
	req := func(nonce string, wrap ...string) string {
		return nonce + " - " + BatchedPrefix + "1 " + quoteRequest(append([]string{"true", h, "P"}, wrap...)...) + "\n"
	}
	queued := req("a", append(slices.Clone(self), RulesFlag, sf, "--")...) + // the same level
		"s = look 10 /etc\n" + // a look request
		req("b", append(slices.Clone(self), RulesFlag, mf, "--")...) +
		req("c", append(slices.Clone(self), RulesFlag, mf, "--")...) + // the same again
		req("d", "/other/launcher", RulesFlag, filepath.Join(dir, "other.rules"), "--") + // not this launcher's
		req("e") // unconfined
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"batch", queued, []string{sf, mf}},
		{"partial", strings.TrimSuffix(req("b", append(slices.Clone(self), RulesFlag, mf, "--")...), "\n"), []string{sf}},
		{"none", "", []string{sf}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := bufio.NewReader(strings.NewReader(tc.in))
			rd.Peek(1) // read in, as Serve has it after a request
			s := &server{self: self, confined: map[string]*rulesFiles{}, rd: rd}
			defer s.close()
			r, err := s.restrictor([]string{sf})
			if err != nil {
				t.Fatal(err)
			}
			if s.confined[sf] == nil || s.confined[sf].r != r {
				t.Fatal("the request's own rules are not the ones built")
			}
			var got []string
			for k := range s.confined {
				got = append(got, k)
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("built %q, want %q", got, want)
			}
		})
	}
}
