package confine

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRulesetFilesConfine: rules computed once (-compile) confine every
// later command (-rules) as the Spec does, two files stack (each must
// allow), and a directory whose entries changed makes them computed again
// (a file created beside the secret after compiling is still readable,
// the secret still not).
func TestRulesetFilesConfine(t *testing.T) {
	needLandlock(t)
	h, s := home(t, ReadOnly)
	dir := t.TempDir()
	file := filepath.Join(dir, "safe.rules")
	var out bytes.Buffer
	if code := Launch(append([]string{CompileFlag, file}, s.Args()...), &out, &out); code != 0 {
		t.Fatalf("compile: exit %d: %s", code, out.String())
	}
	run := func(script string, files ...string) (string, int) {
		var args []string
		for _, f := range files {
			args = append(args, RulesFlag, f)
		}
		return launched(t, append(args, "--", "/bin/sh", "-c", script))
	}
	if o, code := run("cat "+h+"/work/notes", file); code != 0 || o != "notes" {
		t.Errorf("read: exit %d %q", code, o)
	}
	if o, code := run("cat "+h+"/.ssh/id_rsa", file); code == 0 || strings.Contains(o, "SECRET") {
		t.Errorf("secret read: exit %d %q", code, o)
	}
	if _, code := run("echo x > "+h+"/work/notes", file); code == 0 {
		t.Error("a write ran under the compiled read-only rules")
	}
	// Entries made after compiling: the listed home changed.
	before, _ := os.ReadFile(file)
	if err := os.WriteFile(filepath.Join(h, "later"), []byte("later"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, code := run("cat "+h+"/later", file); code != 0 || o != "later" {
		t.Errorf("a file made after compiling: exit %d %q", code, o)
	}
	if after, _ := os.ReadFile(file); bytes.Equal(before, after) {
		t.Error("stale rules were not written again")
	}
	// Stacked with a ruleset that allows writes to work/ only: still
	// read-only (both must allow).
	wfile := filepath.Join(dir, "work.rules")
	if err := WriteRuleset(wfile, Compile(Spec{Writable: []string{h + "/work"}})); err != nil {
		t.Fatal(err)
	}
	if _, code := run("echo x > "+h+"/work/notes", file, wfile); code == 0 {
		t.Error("stacked rulesets allowed what one denies")
	}
	if o, code := run("echo y > "+h+"/work/notes && cat "+h+"/work/notes", wfile); code != 0 || o != "y\n" {
		t.Errorf("writable: exit %d %q", code, o)
	}
	if _, code := run("echo y > "+h+"/.bashrc", wfile); code == 0 {
		t.Error("a write outside the writable paths ran")
	}
}

// launched runs this test binary as the launcher with args.
func launched(t *testing.T, args []string) (string, int) {
	t.Helper()
	return runSelf(t, append([]string{LaunchArg}, args...))
}

func TestRulesetRoundTrip(t *testing.T) {
	_, s := home(t, NoProtected)
	rs := Compile(s)
	if len(rs.Rules) == 0 || len(rs.Stamps) == 0 {
		t.Fatalf("no rules or stamps: %+v", rs)
	}
	got, err := DecodeRuleset(rs.Encode())
	if err != nil || !reflect.DeepEqual(got, rs) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, got, rs)
	}
	if rs.Stale() {
		t.Error("stale right after compiling")
	}
}

func TestDecodeRulesetRefusesBadInput(t *testing.T) {
	for _, in := range []string{"", "{", "[]", `{"v":1}`, `{"v":3}`, `{"v":2,"x":1}`,
		`{"v":2,"rules":[{"p":"rel","r":4}]}`, `{"v":2,"rules":[{"p":"/a/../b","r":4}]}`,
		`{"v":2,"rules":[{"p":"/a","r":0}]}`, `{"v":2,"rules":[{"p":"/a","r":1099511627776}]}`,
		`{"v":2,"stamps":[{"p":"","t":1}]}`, `{"v":2,"stamps":[{"p":"/","t":-2}]}`, `{"v":2,"spec":{"NoRead":["x"]}}`} {
		if _, err := DecodeRuleset([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func FuzzDecodeRuleset(f *testing.F) {
	f.Add(string(Compile(Spec{NoRead: []string{"/root/.ssh"}, Public: []string{"*.pub"}}).Encode()))
	f.Add(`{"v":2,"rules":[{"p":"/","r":13,"d":true}],"stamps":[{"p":"/","t":5,"n":"ab","h":true}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := DecodeRuleset([]byte(in))
		if err != nil {
			return
		}
		again, err := DecodeRuleset(rs.Encode())
		if err != nil || !reflect.DeepEqual(again, rs) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
