package safety

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// corpus reads one command a line from testdata, skipping blanks and #
// comments; a line "class: command" keeps its class.
func corpus(t testing.TB, name string) (cmds, classes []string) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		class := ""
		if k, v, ok := strings.Cut(line, "\t"); ok {
			class, line = k, v
		}
		cmds, classes = append(cmds, line), append(classes, class)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds, classes
}

// benignBefore is how many commands of testdata/benign.txt the classifier
// rated safe before issue 13 (measured on main at 65d919d).
const benignBefore = 205

// TestBenignCorpusStillRunsUnattended: at least 90% of the benign
// commands that ran unattended before the sound classifier still do.
func TestBenignCorpusStillRunsUnattended(t *testing.T) {
	cmds, _ := corpus(t, "benign.txt")
	p := DefaultPolicy()
	safe := 0
	for _, c := range cmds {
		if a := p.ClassifyCommand(c); a.Level == Safe {
			safe++
		} else {
			t.Logf("asks: %-50s %s", c, a)
		}
	}
	t.Logf("benign corpus: %d of %d safe (before: %d)", safe, len(cmds), benignBefore)
	if safe*10 < benignBefore*9 {
		t.Errorf("only %d of %d benign commands are safe; before issue 13 %d were (need ≥ 90%%)", safe, len(cmds), benignBefore)
	}
}
