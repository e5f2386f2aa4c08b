package safety

import (
	"bufio"
	"os"
	"testing"
)

func TestScratchCmds(t *testing.T) {
	f, err := os.Open("/tmp/gtfo/cmds.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultPolicy()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if s.Text() == "" {
			continue
		}
		a := p.ClassifyCommand(s.Text())
		t.Logf("%q: %s", s.Text(), a)
	}
}
