package safety

import (
	"slices"
	"strings"
	"testing"
)

// TestBackupTargets: the backups a command makes are write targets; a
// backup name known only when it runs is high.
func TestBackupTargets(t *testing.T) {
	for _, tc := range []struct {
		cmd    string
		backup string // "" for none
		high   string // a reason substring when high
	}{
		{cmd: "cp /srv/a /srv/b"},
		{cmd: "cp -b /srv/a /srv/b", backup: "/srv/b~"},
		{cmd: "cp -ab /srv/a /srv/b", backup: "/srv/b~"},
		{cmd: "cp --backup /srv/a /srv/b", backup: "/srv/b~"},
		{cmd: "cp --backup=existing -S .orig /srv/a /srv/b", backup: "/srv/b.orig"},
		{cmd: "cp --suffix=.old /srv/a /srv/b", backup: "/srv/b.old"},
		{cmd: "cp -S.old /srv/a /srv/b", backup: "/srv/b.old"},
		{cmd: "cp --backup=none /srv/a /srv/b"},
		{cmd: "mv -b /srv/a /srv/b", backup: "/srv/b~"},
		{cmd: "mv -fb /srv/a /srv/b", backup: "/srv/b~"},
		{cmd: "install -b -m 644 /srv/a /srv/b", backup: "/srv/b~"},
		{cmd: "ln -sfb a /srv/b", backup: "/srv/b~"},
		{cmd: "sed -i.bak s/a/b/ /srv/f", backup: "/srv/f.bak"},
		{cmd: "sed -ni.bak s/a/b/p /srv/f", backup: "/srv/f.bak"},
		{cmd: "sed --in-place=.orig s/a/b/ /srv/f", backup: "/srv/f.orig"},
		{cmd: "sed -i s/a/b/ /srv/f"},
		{cmd: "cp --backup=numbered /srv/a /srv/b", high: "numbered"},
		{cmd: "cp --backup=t /srv/a /srv/b", high: "numbered"},
		{cmd: "cp --backup=bogus /srv/a /srv/b", high: "unknown backup control"},
		{cmd: "cp -b -S /x /srv/a /srv/b", high: "names no file beside"},
		{cmd: "cp -b -t /srv/d /srv/a", high: "target directory"},
		{cmd: `cp -b -S "$X" /srv/a /srv/b`, high: "not known before it runs"},
		{cmd: "sed -i'old_*' s/a/b/ /srv/f", high: "from the file's path"},
		{cmd: "sed -i'../*' s/a/b/ /srv/f", high: "another directory"},
		// getopt_long's abbreviations of --backup (session 12's round trip).
		{cmd: "cp --back=t /srv/a /srv/b", high: "numbered"},
		{cmd: "install --b=numbered /srv/a /srv/b", high: "numbered"},
		{cmd: "ln --backu=nil -s a /srv/b", backup: "/srv/b~"},
		{cmd: "mv --ba /srv/a /srv/b", backup: "/srv/b~"},
	} {
		a, touched := DefaultPolicy().AnalyzeCommand(tc.cmd)
		var writes []string
		for _, w := range touched {
			if w.Op == FileWrite {
				writes = append(writes, w.Path)
			}
		}
		if tc.high != "" {
			if a.Level != High || !strings.Contains(a.String(), tc.high) {
				t.Errorf("%s: %s, want high naming %q", tc.cmd, a, tc.high)
			}
			continue
		}
		hasBackup := slices.ContainsFunc(writes, func(p string) bool {
			return strings.HasSuffix(p, "~") || strings.Contains(p, ".bak") || strings.HasSuffix(p, ".orig") || strings.HasSuffix(p, ".old")
		})
		switch {
		case tc.backup == "" && hasBackup:
			t.Errorf("%s: writes %q, want no backup", tc.cmd, writes)
		case tc.backup != "" && !slices.Contains(writes, tc.backup):
			t.Errorf("%s: writes %q, want the backup %s", tc.cmd, writes, tc.backup)
		}
	}
}
