package redact

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The guard on learning, on the worst text for it: this repository's own
// Go source, test files included (made-up secrets by the hundred, code
// full of password, token and key). A step that greps it for secret words
// and steps that cat each file (harvested as a step's read files are)
// teach the set; redacted again afterwards, the outputs keep at least 99%
// of the bytes the patterns alone keep: what the set learned hides no
// more than 1% of what is not a secret by the patterns. (The patterns
// alone keep about 97% of this text: its test files' made-up secrets,
// PASSWORD=hunter2xyz, are secrets to them.) Without the guard (learnable
// always true) the set learns code, from a PEM block in a Go string that
// runs to the end of the file (t.Fatal(err), if err != nil {) and from
// assignments (+token), default:), and keeps 0.95 of it.
func TestLearnGuardOnSource(t *testing.T) {
	var outputs []string
	grep := exec.Command("grep", "-rnI", "-i", "-E", "passw|secret|token|api.?key|private|auth", "--include=*.go", ".")
	grep.Dir = ".."
	out, err := grep.Output()
	if err != nil || len(out) < 100<<10 {
		t.Fatalf("grep: %v, %d bytes", err, len(out))
	}
	for s := string(out); len(s) > 0; { // as steps' outputs of 64 KiB
		n := min(len(s), 64<<10)
		outputs, s = append(outputs, s[:n]), s[n:]
	}
	nGrep := len(outputs)
	err = filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		data, err := os.ReadFile(p)
		outputs = append(outputs, string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet()
	for i, o := range outputs {
		if i >= nGrep && len(o) <= MaxHarvest {
			set.HarvestText(fmt.Sprintf("f%d_test.go", i), o)
		}
		set.String(o)
	}
	var total, lost, patternsLost int
	for _, o := range outputs {
		total += len(o)
		lost += removed(o, set.String(o))
		patternsLost += removed(o, String(o))
	}
	kept := 1 - float64(lost)/float64(total)
	patternsKept := 1 - float64(patternsLost)/float64(total)
	t.Logf("%d outputs, %d bytes: kept %.4f, by the patterns alone %.4f (ratio %.4f); %d values learned",
		len(outputs), total, kept, patternsKept, kept/patternsKept, set.Len())
	if kept/patternsKept < 0.99 {
		t.Errorf("kept %.4f of the %.4f the patterns keep", kept, patternsKept)
	}
	if os.Getenv("GUARD_DEBUG") != "" {
		all := strings.Join(outputs, "\n")
		var vals []string
		for _, e := range set.entries {
			vals = append(vals, fmt.Sprintf("%8d %s=%s", strings.Count(all, e.value)*len(e.value), e.name, e.value))
		}
		os.WriteFile(os.Getenv("GUARD_DEBUG"), []byte(strings.Join(vals, "\n")), 0o644)
	}
}

// learnable, case by case: what reads as code or a name is not learned,
// what reads as a secret is.
func TestLearnable(t *testing.T) {
	for v, want := range map[string]bool{
		"JqDbPw-5521xK": true, "hunter2secret": true, "Xk9#mQ2$vL7=pR4/wz+T8~q": true, "MIIEvQIBADANBgkqhkiG9w0BAQEF": true,
		"sk-proj-abcdefghijklmnopqrstuv": true, "eyJhbGciOiJIUzI1NiJ9.x.y": true, "Tr0ub4dor&3xyz": true,
		"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----": true,
		"if err != nil {": false, "t.Fatal(err)": false, "name string": false, "redact.NewSet": false, "bf.AskPass,": false,
		"+token)": false, `"strings"`: false, "--token-file": false, "accept-new": false, "default:": false,
		"strings.TrimSpace(x)": false, "map[string]any": false, "x:=y12345": false, `BecomeSecret99\napi_token=x`: false,
		"{{.Password}}": false, "%s-secret-%d": false, "continue_": false,
	} {
		if got := learnable(v); got != want {
			t.Errorf("learnable(%q) = %v, want %v", v, got, want)
		}
	}
	for line, want := range map[string]bool{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw": true, "continue": false, "t.Fatal(err)": false, "AB12cd==": true} {
		if got := learnablePEMLine(line); got != want {
			t.Errorf("learnablePEMLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// A set learns at most maxLearnPerText values from one text and MaxFound
// in all; Known values are not capped.
func TestLearnCaps(t *testing.T) {
	var b strings.Builder
	for i := range 2 * maxLearnPerText {
		fmt.Fprintf(&b, "SECRET_%d=Val-%06dxQ\n", i, i)
	}
	set := NewSet()
	out := set.String(b.String())
	if set.Len() != maxLearnPerText {
		t.Errorf("learned %d from one text, want %d", set.Len(), maxLearnPerText)
	}
	if strings.Contains(out, "Val-") {
		t.Errorf("a value beyond the cap is not hidden where the patterns find it:\n%s", out)
	}
	for i := 0; set.Len() < MaxFound; i++ {
		set.Add("S", fmt.Sprintf("Found-%07dzQ", i), Found)
	}
	if set.Add("S", "OneMore-9999zQ", Found) {
		t.Error("a Found value beyond MaxFound was added")
	}
	if !set.Add("S", "KnownValue-9999zQ", Known) {
		t.Error("a Known value beyond MaxFound was not added")
	}
}
