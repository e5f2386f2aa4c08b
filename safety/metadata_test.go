package safety

import (
	"strings"
	"testing"
)

// TestMetadataChanges: mode, owner, times, access lists and attributes
// are writes of their targets: Medium at most (and only where undo keeps
// them), High on a protected path, on a link that leads to one on the
// host, or where undo cannot take the change back.
func TestMetadataChanges(t *testing.T) {
	p := DefaultPolicy()
	// On the host: ~/.bashrc is a link into ~/dotfiles (stow, yadm), and
	// ~/rc a link to ~/.bashrc.
	rs := []Resolved{
		{Touch: Touch{Path: "~/.bashrc", Write: true}, Real: "/home/u/dotfiles/bashrc"},
		{Touch: Touch{Path: "~/rc", Write: true}, Real: "/home/u/.bashrc"},
	}
	for _, tc := range []struct {
		cmd         string
		want, jwant Level
		reason      string
	}{
		{`chmod 666 ~/.bashrc`, High, High, "protected"},
		{`chmod 666 /home/u/.bashrc`, High, High, "protected"},
		{`chmod 666 ~/rc`, High, High, "protected"},
		{`chmod -h 666 ~/rc`, High, High, "protected"},
		{`chown nobody ~/rc`, High, High, "protected"},
		{`chgrp users ~/.ssh`, High, High, "protected"},
		{`touch -d 2000-01-01 ~/.bashrc`, High, High, "protected"},
		{`touch -r /etc/passwd ~/rc`, High, High, "protected"},
		{`chmod --reference=/etc/shadow ~/.bashrc`, High, High, "protected"},
		{`setfacl -m u:nobody:rw ~/.bashrc`, High, High, "protected"},
		{`setfattr -n user.x -v 1 ~/notes.txt`, High, High, "extended attributes"},
		{`chattr +i ~/notes.txt`, High, High, "chattr"},
		{`chmod 4755 ~/bin2/x`, High, High, "setuid"},
		{`chmod -R 000 ~/important`, High, Medium, "recursive"},
		{`chmod 644 ~/notes.txt`, Medium, Medium, "permissions"},
		{`chown u ~/notes.txt`, Medium, Medium, "permissions"},
		{`touch -t 200001010000 ~/notes.txt`, Medium, Medium, "changes files"},
	} {
		an := p.AnalyzeResolved(tc.cmd, "/home/u", rs)
		if an.Level != tc.want || an.IfJournaled.Level != tc.jwant || !strings.Contains(strings.Join(an.Reasons, "\n"), tc.reason) {
			t.Errorf("%s = %s (journaled %s), want %s (%s) with %q", tc.cmd, an.Assessment, an.IfJournaled.Level, tc.want, tc.jwant, tc.reason)
		}
	}
}
