package safety

import (
	"slices"
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
	rs := []Touch{
		{Path: "~/.bashrc", Op: FileWrite, Real: "/home/u/dotfiles/bashrc"},
		{Path: "~/rc", Op: FileWrite, Real: "/home/u/.bashrc"},
	}
	for _, tc := range []struct {
		cmd         string
		want, jwant Level
		reason      string
	}{
		{`chmod 666 ~/.bashrc`, High, High, "protected"},
		{`chmod 666 /home/u/.bashrc`, High, High, "protected"},
		{`chmod 644 ~/rc`, High, High, "protected"}, // 666 is High anywhere (every user writes)
		{`chmod -h 644 ~/rc`, High, High, "protected"},
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

// TestMetadataOnLinkTargets: a metadata change names the file a protected
// link leads to (~/.bashrc → ~/dotfiles/bashrc, ~/.ssh → ~/dotfiles/ssh):
// Landlock does not hold chmod, so the classifier rates the target as the
// protected path, from the links the executor resolved for LinkProbes.
func TestMetadataOnLinkTargets(t *testing.T) {
	p := DefaultPolicy()
	if an := p.Analyze(`cat ~/dotfiles/bashrc`, "/home/u"); len(an.LinkProbes) != 0 {
		t.Errorf("a read asks for link probes: %v", an.LinkProbes)
	}
	probes := p.Analyze(`chmod 666 ~/dotfiles/bashrc`, "/home/u").LinkProbes
	for _, want := range []string{"~/.bashrc", "~/.ssh", "~/.profile"} {
		if !slices.Contains(probes, want) {
			t.Errorf("probes %v lack %s", probes, want)
		}
	}
	// What the executor hands back: the probes that are links.
	rs := []Touch{
		{Path: "~/.bashrc", Real: "/home/u/dotfiles/bashrc"},
		{Path: "~/.ssh", Real: "/home/u/dotfiles/ssh"},
		{Path: "~/.profile", Real: "/srv/shared/profile"},
	}
	for _, tc := range []struct {
		cmd  string
		want Level
	}{
		{`chmod 644 ~/dotfiles/bashrc`, High}, // 666 is high anywhere: 644 proves the link
		{`chmod 644 /home/u/dotfiles/bashrc`, High},
		{`chown nobody ~/dotfiles/ssh/authorized_keys`, High},
		{`touch -d 2000-01-01 ~/dotfiles/ssh/config`, High},
		{`setfacl -m u:nobody:rw ~/dotfiles/bashrc`, High},
		{`chmod 644 /srv/shared/profile`, High},
		{`cd ~/dotfiles && chmod 644 bashrc`, High},
		{`chmod 644 ~/dotfiles/notes`, Medium},
		{`chmod 644 ~/notes.txt`, Medium},
	} {
		an := p.AnalyzeResolved(tc.cmd, "/home/u", rs)
		if an.Level != tc.want {
			t.Errorf("%s = %s, want %s", tc.cmd, an.Assessment, tc.want)
		}
	}
}
