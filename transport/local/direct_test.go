package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/transport"
	"mvdan.cc/sh/v3/syntax"
)

func TestDirectWords(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"true", []string{"true"}},
		{"false", []string{"false"}},
		{"ls -l /etc", []string{"ls", "-l", "/etc"}},
		{"  ls\t-a  ", []string{"ls", "-a"}},
		{"dd if=/dev/zero of=/dev/null count=1", []string{"dd", "if=/dev/zero", "of=/dev/null", "count=1"}},
		{"./run.sh a,b c:d e@f 50% +x", []string{"./run.sh", "a,b", "c:d", "e@f", "50%", "+x"}},
		{"/usr/bin/env", []string{"/usr/bin/env"}},
		// sh's business: builtins, reserved words, assignments, quoting,
		// expansions, redirections, operators, comments, newlines.
		{"true x", nil}, {"false --help", nil}, {"cd /tmp", nil}, {"exit 3", nil}, {"echo hi", nil},
		{"test -e /etc", nil}, {"[ -e /etc ]", nil}, {"printf x", nil}, {"kill 1", nil}, {"pwd", nil},
		{". ./env", nil}, {": x", nil}, {"exec ls", nil}, {"command ls", nil}, {"if", nil}, {"time ls", nil},
		// Quoted text: what sh's quotes hold, quotes removed.
		{"ls 'a b'", []string{"ls", "a b"}}, {`ls "a"`, []string{"ls", "a"}}, {`grep -r "x;y|z" /etc`, []string{"grep", "-r", "x;y|z", "/etc"}},
		{`printf2 '%s $HOME *' ""x'' a"b"'c'`, []string{"printf2", "%s $HOME *", "x", "abc"}}, {"ls ''", []string{"ls", ""}},
		{`'ls' -a`, []string{"ls", "-a"}}, {`ls "it's"`, []string{"ls", "it's"}}, {`ls '"'`, []string{"ls", `"`}},
		{`'cd' /`, nil}, {`"A=1" ls`, nil}, {"ls 'a", nil}, {`ls "a`, nil}, {`ls "$HOME"`, nil}, {"ls \"`pwd`\"", nil},
		{`ls "a\b"`, nil}, {`ls "a!"`, nil}, {"ls 'a\nb'", nil}, {`ls $'a'`, nil},
		{"A=1 ls", nil}, {"A=1", nil}, {`ls a\ b`, nil},
		{"ls $HOME", nil}, {"ls `pwd`", nil}, {"ls ~", nil}, {"ls *", nil}, {"ls ?", nil}, {"ls [a]", nil},
		{"ls > f", nil}, {"ls < f", nil}, {"ls | cat", nil}, {"ls; rm x", nil}, {"ls && rm x", nil},
		{"ls &", nil}, {"ls # c", nil}, {"ls\nrm x", nil}, {"(ls)", nil}, {"{ ls; }", nil}, {"!ls", nil},
		{"ls é", nil}, {"", nil}, {" \t ", nil}, {"ls\x00", nil},
	} {
		got := directWords(c.cmd)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.cmd, got, c.want)
		}
		if got != nil {
			checkOneCall(t, c.cmd, got)
		}
	}
}

// checkOneCall fails unless sh's grammar (mvdan.cc/sh, as the classifier
// parses commands) reads cmd as one call of exactly words, each plain
// literal or quoted text (no assignment, redirection or expansion), and
// unless /bin/sh itself, given `set -- CMD`, makes the same words.
func checkOneCall(t *testing.T, cmd string, words []string) {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		t.Fatalf("%q: taken as plain words %q, but sh's grammar rejects it: %v", cmd, words, err)
	}
	if len(f.Stmts) != 1 {
		t.Fatalf("%q: %d statements", cmd, len(f.Stmts))
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) != len(words) {
		t.Fatalf("%q: not one plain call of %q", cmd, words)
	}
	for i, w := range call.Args {
		var v strings.Builder
		for _, p := range w.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				v.WriteString(p.Value)
			case *syntax.SglQuoted:
				if p.Dollar {
					t.Fatalf("%q: $'…' taken", cmd)
				}
				v.WriteString(p.Value)
			case *syntax.DblQuoted:
				for _, q := range p.Parts {
					l, ok := q.(*syntax.Lit)
					if !ok {
						t.Fatalf("%q: an expansion in double quotes taken", cmd)
					}
					v.WriteString(l.Value)
				}
			default:
				t.Fatalf("%q: word %d has a %T", cmd, i, p)
			}
		}
		if v.String() != words[i] {
			t.Fatalf("%q: word %d is %q to sh's grammar, %q here", cmd, i, v.String(), words[i])
		}
	}
	out, err := exec.Command("/bin/sh", "-c", "set -- "+cmd+"; printf '%s\\0' \"$@\"").Output()
	if err != nil {
		t.Fatalf("%q: /bin/sh: %v", cmd, err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"); !slices.Equal(got, words) {
		t.Fatalf("%q: /bin/sh makes %q, here %q", cmd, got, words)
	}
}

func FuzzDirectWords(f *testing.F) {
	for _, s := range []string{"true", "ls -l /etc", "A=1 ls", "ls 'a'", "ls $x", "echo hi", "ls # x", "dd if=x", "ls\tx", `ls "a b"'c'`, "ls ''"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if words := directWords(cmd); words != nil {
			checkOneCall(t, cmd, words)
			if slices.Contains(shellWords, words[0]) && len(words) > 1 {
				t.Fatalf("%q: a builtin with arguments taken", cmd)
			}
		}
	})
}

// run runs cmd through tr in dir.
func run(t *testing.T, tr *Transport, cmd, dir string) transport.Result {
	t.Helper()
	res, err := tr.Run(context.Background(), transport.Command{Command: cmd, Dir: dir})
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return res
}

// TestDirectSameAsShell: a command run directly gives what sh -c gives —
// status, output, argv, environment (PWD), directory — and one sh must
// run (not found, not executable, a script without #!, a builtin) is
// left to sh.
func TestDirectSameAsShell(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	for _, d := range []string{bin, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(work, link); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"args":    "#!/bin/sh\necho \"$0|$#|$*\"; pwd; exit 7\n",
		"noshbng": "echo no shebang $0\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "notexec"), []byte("#!/bin/sh\necho x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(bin, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	direct, err := New()
	if err != nil {
		t.Fatal(err)
	}
	viaSh, err := New()
	if err != nil {
		t.Fatal(err)
	}
	viaSh.noDirect = true
	for _, c := range []struct {
		cmd, dir string
		direct   bool
	}{
		{"true", "", true}, {"false", "", true},
		{"ls -a /", "", true}, {"ls /nonexistent-dir", "", true},
		{"args a b c", work, true}, {"args x", link, true}, {"./bin/args y z", dir, true},
		{bin + "/args", "", true},
		{`args 'a  b' "c;d" '' x"y"'z'`, work, true}, {`'args' "*"`, work, true}, {`'' x`, "", false},
		{"env", link, true}, {"env", work, true}, {"env", "", true},
		{"cat /proc/self/cmdline", "", true},
		{"nosuch-program-xyz", "", false}, {"notexec", "", false}, {bin + "/notexec", "", false},
		{"adir", "", false}, {"noshbng 1", "", false}, {"./bin/nosuch", dir, false},
		{"cd /", "", false}, {"exit 3", "", false}, {"echo a  b", "", false},
	} {
		before := direct.directs.Load()
		got := run(t, direct, c.cmd, c.dir)
		if took := direct.directs.Load() > before; took != c.direct {
			t.Errorf("%q: run directly %v, want %v", c.cmd, took, c.direct)
		}
		want := run(t, viaSh, c.cmd, c.dir)
		if c.cmd == "env" { // the same variables; sh lists them in its own order
			got.Stdout, want.Stdout = sortLines(got.Stdout), sortLines(want.Stdout)
		}
		if got.ExitCode != want.ExitCode || got.Stdout != want.Stdout || got.Stderr != want.Stderr {
			t.Errorf("%q in %q:\ndirect: %d %q %q\nsh:     %d %q %q", c.cmd, c.dir,
				got.ExitCode, got.Stdout, got.Stderr, want.ExitCode, want.Stdout, want.Stderr)
		}
	}
	if direct.directs.Load() == 0 || viaSh.directs.Load() != 0 {
		t.Fatalf("directs: %d and %d", direct.directs.Load(), viaSh.directs.Load())
	}
}

func sortLines(s string) string {
	l := strings.Split(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}

// TestDirectExecConfined: a command run directly on a confined thread is
// held by the thread's Landlock domain (a denied file unread, no file
// made at read-only) and its seccomp filter (no chmod at read-only), as
// one sh ran was. It fails if the direct exec left the thread.
func TestDirectExecConfined(t *testing.T) {
	if confine.ABI() < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel has no Landlock")
		}
		t.Skip("the kernel has no Landlock")
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret", "key")
	file := filepath.Join(dir, "file")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{secret: "SECRET-VALUE\n", file: "plain\n"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := confine.NewRestrictor(confine.Compile(confine.Spec{
		NoRead: []string{filepath.Dir(secret)}, Devices: []string{"/dev/null"}, Syscalls: confine.SyscallsRead}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	confined := func(cmd string) transport.Result {
		t.Helper()
		before := tr.directs.Load()
		var res transport.Result
		var rerr error
		if err := r.Do(func() { res, rerr = tr.Run(context.Background(), transport.Command{Command: cmd, Dir: dir}) }); err != nil {
			t.Fatal(err)
		}
		if rerr != nil {
			t.Fatalf("%q: %v", cmd, rerr)
		}
		if tr.directs.Load() != before+1 {
			t.Fatalf("%q was not run directly", cmd)
		}
		return res
	}
	if res := confined("cat " + file); res.ExitCode != 0 || res.Stdout != "plain\n" {
		t.Fatalf("a readable file: %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res := confined("cat " + secret); res.ExitCode == 0 || strings.Contains(res.Stdout, "SECRET") {
		t.Fatalf("the denied file was read: %d %q", res.ExitCode, res.Stdout)
	}
	made := filepath.Join(dir, "made")
	if res := confined("touch " + made); res.ExitCode == 0 {
		t.Fatalf("touch at read-only: %d %q", res.ExitCode, res.Stderr)
	}
	if _, err := os.Lstat(made); err == nil {
		t.Fatal("a file was made at read-only")
	}
	if res := confined("chmod 644 " + file); res.ExitCode == 0 || !strings.Contains(res.Stderr, "not permitted") {
		t.Fatalf("chmod at read-only: %d %q", res.ExitCode, res.Stderr)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the mode changed: %v %v", fi.Mode(), err)
	}
}

// TestRunAllocates: a command's output pipes are drained through pooled
// buffers, not 32 KiB allocated per stream per command (copybuf.go).
func TestRunAllocates(t *testing.T) {
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	c := transport.Command{Command: "true", Stdout: &out}
	for range 3 { // the pool filled, the first allocations made
		if _, err := tr.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	const n = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := tr.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated a command", per)
	if per >= 32<<10 {
		t.Fatalf("%d bytes allocated a command: the output copies allocate their buffers", per)
	}
}
