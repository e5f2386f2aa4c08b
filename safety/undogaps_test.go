package safety

import (
	"slices"
	"strings"
	"testing"
)

// TestMediumUndoGaps: the gaps the round trip of the corpus's medium
// entries found (TestMediumCorpusUndoOtherUser): what such a command
// changes is journaled, or it is high before it runs.
func TestMediumUndoGaps(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		cmd    string
		writes []string // journaled targets it must have, in this order
		high   string   // a reason substring when high
	}{
		// install -D makes the destination's directories: journaled
		// (as mkdir -p's are), before the file, so undo removes the file
		// first and then them.
		{cmd: "install -D /etc/hostname /srv/n/e/w", writes: []string{"/srv/n/e", "/srv/n/e/w"}},
		{cmd: "install -Dm644 /etc/hostname /srv/n/w", writes: []string{"/srv/n", "/srv/n/w"}},
		{cmd: "install -m644 /etc/hostname /srv/n/w", writes: []string{"/srv/n/w"}},
		// "-" is a file of that name for cp, a redirection, tee and sort -o.
		{cmd: "cd /srv && cp /etc/hostname -", writes: []string{"/srv/-"}},
		{cmd: "cd /srv && echo x > -", writes: []string{"/srv/-"}},
		{cmd: "cd /srv && tee - < /etc/hostname", writes: []string{"/srv/-"}},
		{cmd: "cd /srv && sort -o - /etc/hostname", writes: []string{"/srv/-"}},
		// A job that may outlive the step changes files after the
		// journal's last look.
		{cmd: "rm /srv/f &", high: "background job"},
		{cmd: "sleep 1 & rm /srv/f", high: "background job"},
		// cd - goes back to where the step started, not where the
		// classifier was.
		{cmd: "cd /srv/sub && cd - && rm f", high: "unresolved directory"},
		{cmd: "cd /srv/sub && cd - && cat f > g", high: "unresolved directory"},
	} {
		an := p.Analyze(tc.cmd, "/home/u")
		if tc.high != "" {
			if an.Level != High || !strings.Contains(an.String(), tc.high) {
				t.Errorf("%s: %s, want high naming %q", tc.cmd, an.Assessment, tc.high)
			}
			continue
		}
		var writes []string
		for _, w := range an.Touches {
			if w.Writes() {
				writes = append(writes, w.Path)
			}
		}
		if an.Level != Medium {
			t.Errorf("%s: %s, want medium", tc.cmd, an.Assessment)
		}
		// In order: a directory install -D makes comes before the file.
		at := -1
		for _, w := range tc.writes {
			i := slices.Index(writes, w)
			if i <= at {
				t.Errorf("%s: writes %q, want %q in that order", tc.cmd, writes, tc.writes)
				break
			}
			at = i
		}
	}
	// The directories are marked as ones the command makes, with parents.
	for _, w := range p.Analyze("install -D /etc/hostname /srv/n/e/w", "/home/u").Touches {
		if w.Path == "/srv/n/e" && (!w.Dir || !w.Parents) {
			t.Errorf("install -D: %+v, want a directory made with its parents", w)
		}
	}
}

// TestProcLinkDotDot: ".." after a /proc magic link climbs from where the
// link leads (the kernel follows cwd, root, fd/N first), not lexically:
// /proc/self/cwd/../.npmrc is ~/.npmrc from ~/work, and was rated safe as
// /proc/self/.npmrc (with the kernel off it printed the token).
func TestProcLinkDotDot(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		cmd  string
		want Level
	}{
		{"cd ~/work && cat /proc/self/cwd/../.npmrc", High},
		{"cat /proc/self/cwd/../.npmrc", High},
		{"cd ~/work/sub && cat /proc/thread-self/cwd/../../.aws/credentials", High},
		{"cd ~/work && cat /proc/self/task/1/cwd/../.ssh/id_rsa", High},
		{"cat /proc/self/fd/3/../.npmrc", High},
		{"cd ~/work && echo x > /proc/self/cwd/../.bashrc", High},
		// Lexical where no link comes before the "..".
		{"cat /proc/self/../self/status", Safe},
		{"cd ~/work && cat /proc/self/cwd/../notes.txt", Safe},
		{"cd /srv/app && cat /proc/self/cwd/../app/log.txt", Safe},
	} {
		if got := p.ClassifyCommandAt(tc.cmd, "/home/u"); got.Level != tc.want {
			t.Errorf("%s = %s, want %s", tc.cmd, got, tc.want)
		}
	}
}
