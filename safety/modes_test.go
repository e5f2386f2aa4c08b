package safety

import (
	"strings"
	"testing"
)

// TestModesOpeningToOthers: a mode that lets every user write is High
// anywhere (the kernel refuses it to a medium step); one that lets the
// group write, or a new owner, is High on a directory holding protected
// paths — the home, above it, ~/.config, ~/.local, another account's
// home, and a link that leads to one — and Medium on an ordinary one.
// Session 15 left `chmod o+w ~`, `chmod 777 ~`, `chmod g+w ~` medium:
// undo restores the mode, but meanwhile another user could replace
// ~/.bashrc.
func TestModesOpeningToOthers(t *testing.T) {
	p := DefaultPolicy()
	rs := []Touch{
		{Path: "~/cfg", Op: FileWrite, Real: "/home/u/.config"}, // a link to ~/.config
		{Path: "~/hm", Op: FileWrite, Real: "/home/u"},          // a link to the home
		// ~/.config/systemd is a link into ~/dotfiles (stow).
		{Path: "~/.config/systemd", Real: "/home/u/dotfiles/config/systemd"},
	}
	for _, tc := range []struct {
		cmd    string
		want   Level
		reason string
	}{
		{`chmod o+w ~`, High, "every user"},
		{`chmod 777 ~`, High, "every user"},
		{`chmod g+w ~`, High, "holds protected paths"},
		{`chmod 775 /home/u`, High, "holds protected paths"},
		{`chmod =775 ~`, High, "holds protected paths"},
		{`chmod +w ~`, High, "holds protected paths"}, // the umask is not known
		{`chmod o=u ~`, High, "every user"},
		{`chmod g=u ~`, High, "holds protected paths"},
		{`chmod "$M" ~`, High, "holds protected paths"},
		{`chmod --reference=/tmp/x ~`, High, "holds protected paths"},
		{`chmod -R a+w ~/..`, High, "every user"},
		{`chmod g+w ~/..`, High, "holds protected paths"},
		{`chmod g+w /home`, High, "holds protected paths"},
		{`chmod 775 /home/bob`, High, "holds protected paths"},
		{`chmod 775 ~/.config`, High, "holds protected paths"},
		{`chmod 775 ~/.local`, High, "holds protected paths"},
		{`chmod 777 ~/.ssh`, High, "every user"},
		{`cd; chmod g+w .`, High, "holds protected paths"},
		{`chmod 775 ~/cfg`, High, "holds protected paths"},
		{`chmod 775 ~/hm`, High, "holds protected paths"},
		{`chmod 775 ~/dotfiles/config`, High, "holds protected paths"},
		{`install -d -m 775 ~/.config`, High, "holds protected paths"},
		{`install -d -m 777 ~/.config`, High, "every user"},
		{`mkdir -p -m 777 ~/.config`, High, "every user"},
		{`chown bob ~`, High, "another owner"},
		{`chgrp users ~`, High, "another owner"},
		{`setfacl -m u:nobody:rwx ~`, High, "access lists"},
		{`setfacl -m o::rwx ~/work`, High, "access lists"},
		// Every user writing is High on any file.
		{`chmod 666 ~/notes.txt`, High, "every user"},
		{`chmod 777 /tmp/x`, High, "every user"},
		{`chmod 1777 ~/x`, High, "every user"},
		{`chmod a+rwx,o-w ~/x`, High, "every user"}, // read as granting: no clause is undone
		{`install -m 666 a ~/b`, High, "every user"},
		{`mkdir -m 777 ~/newdir`, High, "every user"},
		{`mkdir -m a=rwx ~/newdir`, High, "every user"},
		// What stays Medium: ordinary places, modes that open nothing.
		{`chmod 755 ~`, Medium, "permissions"},
		{`chmod 700 ~`, Medium, "permissions"},
		{`chmod go-w ~`, Medium, "permissions"},
		{`chmod u=rwx,go=rx ~`, Medium, "permissions"},
		{`chmod u+w ~`, Medium, "permissions"},
		{`chmod 775 ~/proj`, Medium, "permissions"},
		{`chmod g+w ~/proj`, Medium, "permissions"},
		{`chmod +w ~/notes.txt`, Medium, "permissions"},
		{`chmod +x ~/s.sh`, Medium, "permissions"},
		{`chmod "$M" ~/proj`, Medium, "permissions"}, // the kernel holds a medium step
		{`chmod 755 ~/cfg`, Medium, "permissions"},
		{`chmod 775 ~/other`, Medium, "permissions"},
		{`chgrp users ~/proj`, Medium, "permissions"},
		{`install -d -m 755 ~/.config`, Medium, "changes files"},
		{`mkdir -m 775 ~/newdir`, Medium, "changes files"},
		{`install -m 664 a ~/b`, Medium, "changes files"},
	} {
		an := p.AnalyzeResolved(tc.cmd, "/home/u", rs)
		if an.Level != tc.want || !strings.Contains(strings.Join(an.Reasons, "\n"), tc.reason) {
			t.Errorf("%s = %s, want %s with %q", tc.cmd, an.Assessment, tc.want, tc.reason)
		}
	}
}

// TestGrantsWrite: whom a mode lets write, octal and symbolic, with the
// umask's clauses ("+w") counted only where the umask cannot be assumed.
func TestGrantsWrite(t *testing.T) {
	for _, tc := range []struct {
		mode        string
		all         bool
		group, othr bool
	}{
		{"755", false, false, false}, {"775", false, true, false}, {"777", false, true, true}, {"0646", false, false, true},
		{"2", false, false, true}, {"20", false, true, false}, {"01777", false, true, true},
		{"o+w", false, false, true}, {"g+w", false, true, false}, {"a+w", false, true, true}, {"ugo+rw", false, true, true},
		{"+w", false, false, false}, {"+w", true, true, true}, {"=rwx", true, true, true}, {"u+w", true, false, false},
		{"go-w", true, false, false}, {"o=u", false, false, true}, {"g=o", false, true, false}, {"u=rwx,go=rx", true, false, false},
		{"=775", false, true, false}, {"+2", false, false, true}, {"o+rx,g+w", false, true, false}, {"u+s", true, false, false},
		{"a=", true, false, false}, {"o+t", false, false, false}, {"g+X", true, false, false},
		// What chmod would not take may be anything.
		{"", false, true, true}, {"q+w", false, true, true}, {"u", false, true, true}, {"o+z", false, true, true},
		{"o=ug", false, true, true}, {"999", false, true, true}, {"o+w+", false, false, true},
	} {
		got := grantsWrite(tc.mode, tc.all)
		if got.group != tc.group || got.other != tc.othr {
			t.Errorf("grantsWrite(%q, %v) = %+v, want group %v other %v", tc.mode, tc.all, got, tc.group, tc.othr)
		}
	}
}

// FuzzGrantsWrite: any mode word, never a panic; a mode read as letting
// others write when only the umask decides ("+w" read strictly) is read
// so when the umask cannot be assumed too; an octal mode agrees with its
// bits.
func FuzzGrantsWrite(f *testing.F) {
	for _, s := range []string{"777", "o+w", "u=rwx,go=rx", "+w", "=775", "a+rwx,o-w", "o=u", "", ",", "+-=", "0o7", "ugoa+rwxXst"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, mode string) {
		strict, all := grantsWrite(mode, false), grantsWrite(mode, true)
		if strict.group && !all.group || strict.other && !all.other {
			t.Fatalf("grantsWrite(%q): strict %+v, all %+v", mode, strict, all)
		}
		if mode != "" && isOctal(mode) && len(mode) <= 6 {
			v := 0
			for _, c := range mode {
				v = v*8 + int(c-'0')
			}
			if strict.other != (v&0o002 != 0) || strict.group != (v&0o020 != 0) {
				t.Fatalf("grantsWrite(%q) = %+v, mode %o", mode, strict, v)
			}
		}
	})
}
