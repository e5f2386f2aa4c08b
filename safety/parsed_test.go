package safety

import (
	"reflect"
	"slices"
	"testing"
)

// A step's command is parsed once: Analyze and then AnalyzeResolved with
// the host's links (each making several passes) parse each dialect's tree
// once, and rate it exactly as the command parsed afresh for each.
func TestParsedOnce(t *testing.T) {
	p := DefaultPolicy()
	const home = "/home/u"
	for _, c := range []struct {
		cmd    string
		rs     []Touch
		parses int
	}{
		{"cat ~/y", []Touch{{Path: "~/y", Real: home + "/.ssh/id_rsa"}}, 1},
		{"echo x >> ~/y", []Touch{{Path: "~/y", Op: FileWrite, Real: home + "/notes/y"}}, 1},
		// High only because it could not be taken back: the undo view is
		// a pass of its own, over the same tree.
		{"rm -r ~/d", []Touch{{Path: "~/d", Op: FileWrite, Tree: true, Real: home + "/e"}}, 1},
		// bash-only syntax: the POSIX reading is a tree of its own.
		{"[[ -f ~/y ]] && cat ~/y", []Touch{{Path: "~/y", Real: home + "/z"}}, 2},
		// A code string is a tree of its own, each occurrence once.
		{"sh -c 'cat ~/y'; sh -c 'cat ~/y'", []Touch{{Path: "~/y", Real: home + "/.aws/credentials"}}, 3},
	} {
		cmd := ParseCommand(c.cmd)
		an := p.AnalyzeParsed(cmd, home)
		if want := p.Analyze(c.cmd, home); !reflect.DeepEqual(an, want) {
			t.Errorf("%q: parsed once %+v, afresh %+v", c.cmd, an, want)
		}
		res := p.AnalyzeResolvedParsed(cmd, home, c.rs)
		if want := p.AnalyzeResolved(c.cmd, home, c.rs); !reflect.DeepEqual(res, want) {
			t.Errorf("%q with links: parsed once %+v, afresh %+v", c.cmd, res, want)
		}
		if cmd.parses != c.parses {
			t.Errorf("%q: parsed %d times for Analyze and AnalyzeResolved, want %d", c.cmd, cmd.parses, c.parses)
		}
	}
}

// The same code string twice in one command is classified at each place
// it runs (a tree shared by the two would be seen once): the second runs
// in ~/.ssh.
func TestParsedTwiceInOneCommand(t *testing.T) {
	p := DefaultPolicy()
	const cmd = "sh -c 'cat y'; cd ~/.ssh && sh -c 'cat y'"
	an := p.AnalyzeParsed(ParseCommand(cmd), "/home/u")
	if an.Level != High || !slices.Contains(an.Touches, Touch{Path: "~/.ssh/y"}) {
		t.Errorf("%q = %s %q, touches %v; want high, reading ~/.ssh/y", cmd, an.Level, an.Reasons, an.Touches)
	}
}

// FuzzParsedOnce: whatever the command, analyses sharing one parse rate
// it as analyses that parse it afresh.
func FuzzParsedOnce(f *testing.F) {
	f.Add("cat ~/y", "~/y", "/home/u/.ssh/id_rsa", false)
	f.Add("sh -c 'x'; sh -c 'x'", "x", "/etc/passwd", true)
	f.Add("[[ a > f ]] && eval 'rm -r d'", "f", "/home/u/.bashrc", true)
	f.Add("((", "", "", false)
	p := DefaultPolicy()
	f.Fuzz(func(t *testing.T, text, touch, real string, write bool) {
		if len(text) > 512 || len(touch) > 256 || len(real) > 256 {
			return
		}
		rs := []Touch{{Path: touch, Op: writeOp(write), Real: real}}
		cmd := ParseCommand(text)
		if an, want := p.AnalyzeParsed(cmd, "/home/u"), p.Analyze(text, "/home/u"); !reflect.DeepEqual(an, want) {
			t.Fatalf("%q: parsed once %+v, afresh %+v", text, an, want)
		}
		if an, want := p.AnalyzeResolvedParsed(cmd, "/home/u", rs), p.AnalyzeResolved(text, "/home/u", rs); !reflect.DeepEqual(an, want) {
			t.Fatalf("%q with links: parsed once %+v, afresh %+v", text, an, want)
		}
	})
}
