package safety

import "testing"

// TestTrOperandsAreSets: tr reads its input only; its operands are sets,
// not files read (taken for files, the harvest read ./a and ./b before
// `tr a b`, and with a $ in the command walked the working directory as
// a tree: 2 s a step over sshd, 30 s in a loaded CI). Its redirections
// are still reads.
func TestTrOperandsAreSets(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string]int{
		`tr a b < /proc/$PPID/environ | wc -l`: 0,
		`tr -d '\n' | tr a-z A-Z`:              0,
		`tr "$x" y`:                            0,
		`tr a-z A-Z < /etc/hostname`:           1,
	} {
		a := p.Analyze(cmd, "/home/u")
		if len(a.Touches) != want {
			t.Errorf("%s: touches %+v, want %d", cmd, a.Touches, want)
		}
	}
	if a := p.Analyze(`tr -d '\n' < ~/.ssh/id_rsa`, "/home/u"); a.Level != High {
		t.Errorf("tr reading a key: %s", a.Assessment)
	}
}
