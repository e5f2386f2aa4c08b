package confine

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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
	rs.listed = nil // not encoded
	got, err := DecodeRuleset(rs.Encode())
	if err != nil || !reflect.DeepEqual(got, rs) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, got, rs)
	}
	// The home is under /tmp, which the rules list (the home's protected
	// entries are carved out of it): another process's file there makes
	// them stale. Stale ten times in a row is not that.
	for try := 1; rs.Stale(); try++ {
		if try == 10 {
			t.Fatal("stale right after compiling, ten times")
		}
		time.Sleep(time.Duration(try) * 20 * time.Millisecond)
		rs = Compile(s)
	}
}

// TestRulesetEncoding: every field, and paths with every byte escaped,
// survive the round trip; the encoding is one line.
func TestRulesetEncoding(t *testing.T) {
	rs := Ruleset{
		Spec: Spec{Write: true, Net: true, AccountHomes: true, Caps: CapsNoSystem, Syscalls: SyscallsOwn, NoWrite: []string{"/a b", "/%25"}, NoRead: []string{"/r\nx"},
			Public: []string{"*.pub", "/k\xff"}, Devices: []string{"/dev/null"}, Writable: []string{"/w\t"}, Readable: []string{"/"},
			HideDots: []string{"/h"}, DotsOK: []string{".bashrc"}, FindIn: []string{"/h", "/w"}, Secrets: []string{"*.key", ".env*"}, LinksIn: []string{"/h"}},
		Rules:  []Rule{{Path: "/", Rights: readRights, Dir: true}, {Path: "/f \x01x", Rights: accessReadFile}, {Path: "/d", Rights: writeRights, Dir: true}},
		Stamps: []Stamp{{Path: "/", MTime: 5, Names: strings.Repeat("0a", digestBytes)}, {Path: "/gone", MTime: -1}, {Path: "/h", MTime: 7, Names: strings.Repeat("f", 2*digestBytes), Hot: true}},
	}
	// Every field of Spec is set above: one the encoding leaves out is lost
	// when a served worker recompiles from the rules file (session 16:
	// AccountHomes, and with it the other accounts' homes over SSH).
	v := reflect.ValueOf(rs.Spec)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("Spec.%s is not set in this test: set it, and encode it", v.Type().Field(i).Name)
		}
	}
	b := rs.Encode()
	if bytes.Count(b, []byte("\n")) != 1 || b[len(b)-1] != '\n' || bytes.ContainsAny(b[:len(b)-1], "\x00\t\r\xff") {
		t.Errorf("not one line of printable words: %q", b)
	}
	for _, in := range [][]byte{b, bytes.TrimSuffix(b, []byte("\n"))} {
		got, err := DecodeRuleset(in)
		if err != nil || !reflect.DeepEqual(got, rs) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, got, rs)
		}
	}
	if got, err := DecodeRuleset([]byte("agent-rules 6\n")); err != nil || !reflect.DeepEqual(got, Ruleset{}) {
		t.Errorf("empty ruleset: %+v, %v", got, err)
	}
}

func TestDecodeRulesetRefusesBadInput(t *testing.T) {
	d := strings.Repeat("ab", digestBytes)
	for _, in := range []string{"", "\n", "agent-rules", "agent-rules 2", "agent-rules 03", "agent-rules 6 ", "agent-rules  4", " agent-rules 6", "agent-rules 6\n\n",
		`{"v":2}`, "rules 3", "agent-rules 6 bogus", "agent-rules 6 write write", "agent-rules 6 net write", "agent-rules 6 caps", "agent-rules 6 caps all",
		"agent-rules 6 caps read caps read", "agent-rules 6 account-homes net", "agent-rules 6 account-homes account-homes", "agent-rules 6 account-homes x", "agent-rules 6 no-write", "agent-rules 6 no-write rel", "agent-rules 6 no-write /a/../b", "agent-rules 6 no-write /a/",
		"agent-rules 6 public", "agent-rules 6 no-read /a no-write /b", "agent-rules 6 dir /a 4 no-read /b", "agent-rules 6 stamp / 1 - dir /a 4",
		"agent-rules 6 dir rel 4", "agent-rules 6 dir /a/../b 4", "agent-rules 6 dir /a 0", "agent-rules 6 dir /a 1099511627776", "agent-rules 6 dir /a -4",
		"agent-rules 6 dir /a +4", "agent-rules 6 dir /a 04", "agent-rules 6 dir /a x", "agent-rules 6 dir /a", "agent-rules 6 file /a 18446744073709551616",
		"agent-rules 6 stamp / -2 -", "agent-rules 6 stamp / 1", "agent-rules 6 stamp / 01 -", "agent-rules 6 stamp / 1 " + d[1:], "agent-rules 6 stamp / 1 " + strings.ToUpper(d),
		"agent-rules 6 stamp / 1 " + d + "0", "agent-rules 6 stamp rel 1 -", "agent-rules 6 hot / x -",
		"agent-rules 6 no-write /a%2", "agent-rules 6 no-write /a%", "agent-rules 6 no-write /%41", "agent-rules 6 no-write /%0a",
		"agent-rules 6 no-write /%GG", "agent-rules 6 no-write /a\tb", "agent-rules 6 no-write /a\x80", "agent-rules 6 no-write /%00", "agent-rules 6 no-write /a\nb",
		"agent-rules 6 public a%2Fb%00", "agent-rules 3", "agent-rules 4", "agent-rules 5", "agent-rules 6 syscalls", "agent-rules 6 syscalls all", "agent-rules 6 syscalls %72ead",
		"agent-rules 6 syscalls read syscalls own", "agent-rules 6 syscalls read caps read", "agent-rules 6 no-read /a syscalls own"} {
		if rs, err := DecodeRuleset([]byte(in)); err == nil {
			t.Errorf("%q: no error: %+v", in, rs)
		}
	}
	if _, err := DecodeRuleset(make([]byte, maxRuleset+1)); err == nil {
		t.Error("an oversized ruleset was read")
	}
}

// FuzzDecodeRuleset: what DecodeRuleset accepts is exactly what Encode
// writes (the encoding is canonical), and it accepts what Encode writes.
func FuzzDecodeRuleset(f *testing.F) {
	f.Add(string(Compile(Spec{NoRead: []string{"/root/.ssh"}, Public: []string{"*.pub"}}).Encode()))
	f.Add("agent-rules 6 write caps read syscalls read no-write /a%20b public *.pub dir / 13 file /x%25 4 stamp / 5 - hot /h%0A 7 " + strings.Repeat("0f", digestBytes))
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := DecodeRuleset([]byte(in))
		if err != nil {
			return
		}
		enc := rs.Encode()
		if string(enc) != strings.TrimSuffix(in, "\n")+"\n" {
			t.Fatalf("accepted %q, which encodes as %q", in, enc)
		}
		again, err := DecodeRuleset(enc)
		if err != nil || !reflect.DeepEqual(again, rs) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// BenchmarkDecodeRuleset: reading a ruleset file, as the served launcher
// does for each level at the start of every session (~110 KB each for a
// host's default rules).
func BenchmarkDecodeRuleset(b *testing.B) {
	home, _ := os.UserHomeDir()
	rs := Compile(Spec{NoRead: []string{home + "/.ssh", home + "/.aws", "/etc/shadow"}, Public: []string{"*.pub"},
		NoWrite: []string{home + "/.bashrc", home + "/.ssh", "/etc", "/usr"}, Secrets: []string{"*.key", ".env*"}, FindIn: []string{home}})
	enc := rs.Encode()
	if f := os.Getenv("AGENT_BENCH_RULES"); f != "" { // a host's rules file
		var err error
		if enc, err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRuleset(enc); err != nil {
			b.Fatal(err)
		}
	}
}
