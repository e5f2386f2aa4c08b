package safety

import (
	"strings"
	"testing"
)

// TestAttackCorpusIsHigh: every entry of testdata/attacks.txt (issue 13's
// bypass classes) is High: denied without a terminal by default and still
// asked at --approve medium. Entries of a "medium…" class are at least
// Medium: not safe. What an undo journal lowers (IfJournaled: an rm -r
// whose tree was saved) counts too: that is what the executor runs at
// --approve medium once it journaled the step.
func TestAttackCorpusIsHigh(t *testing.T) {
	cmds, classes := corpus(t, "attacks.txt")
	p := DefaultPolicy()
	missed := map[string]int{}
	for i, c := range cmds {
		want := High
		if strings.HasPrefix(classes[i], "medium") {
			want = Medium // not safe, but no worse than the rest of its kind
		}
		if strings.HasPrefix(classes[i], "safe") {
			// Safe on purpose (reading the step's own environment, an
			// allow-list): the engine's corpus tests run them and judge
			// their output.
			continue
		}
		an := p.Analyze(c, "/home/u")
		if an.Level < want {
			missed[classes[i]]++
			t.Errorf("%s: %s = %s, want %s", classes[i], c, an.Assessment, want)
		} else if an.IfJournaled.Level < want {
			missed[classes[i]]++
			t.Errorf("%s: %s = %s once journaled, want %s", classes[i], c, an.IfJournaled, want)
		}
	}
	t.Logf("%d attacks; below high per class: %v", len(cmds), missed)
}
