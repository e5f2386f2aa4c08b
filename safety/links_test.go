package safety

import (
	"strings"
	"testing"
)

// A link's target is where the kernel reads it: a relative symbolic link
// from the link's directory (unless ln -r made it relative itself), and a
// link to a directory holding protected places is High like one to them.
func TestLinkTargets(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string]Level{
		"ln -s agent/config.yaml ~/.config/k":            High,
		"ln -s agent ~/.config/k":                        High,
		"ln -s -t ~/.config agent":                       High,
		"ln -s ./../.bashrc ~/sub/k":                     High,
		"cp -s .ssh/authorized_keys ~/k":                 High,
		"ln -s ~ k":                                      High,
		"ln -s /home/u k":                                High,
		"ln -s ~/.local k":                               High,
		"ln -s ~/notes k":                                Medium,
		"ln -s notes ~/.config/k":                        Medium,
		"ln -sr notes ~/.config/k":                       Medium,
		"ln -s /srv/app/releases/7 /srv/app/cur":         Medium,
		"ln notes ~/.config/k":                           Medium, // a hard link: its name is from where ln runs
		"ln -s agent ~/.config":                          High,   // ~/.config/agent when ~/.config is a directory
		"ln -s ../shared/config.yml /srv/app/config.yml": High,   // as before: the target climbs from where ln runs
	} {
		if a := p.ClassifyCommandAt(cmd, "/home/u"); a.Level != want {
			t.Errorf("%q = %s %q, want %s", cmd, a.Level, a.Reasons, want)
		}
	}
}

// ln -T never puts the link inside its operand, and the places a
// relative target is read from are rated, not journaled: `ln -sfT other
// data.txt` over a file is medium, its touches the link and the target
// only (the journal once tried to stat data.txt/other.txt and made it high).
func TestLinkNoTargetDirectory(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string]Level{
		"ln -sfT other.txt /srv/d/data.txt":                         Medium,
		"ln -sT agent/config.yaml ~/.config/k":                      High,
		"ln -s --no-target-directory agent/config.yaml ~/.config/k": High,
		"ln -sT agent ~/.config":                                    Medium, // -T: ~/.config itself would be the link (ln refuses: it exists)
		"ln -s -S.T agent ~/.config":                                High,   // the T is -S's value, not -T
	} {
		if a := p.ClassifyCommandAt(cmd, "/home/u"); a.Level != want {
			t.Errorf("%q = %s %q, want %s", cmd, a.Level, a.Reasons, want)
		}
	}
	for _, cmd := range []string{"ln -sfT other.txt /srv/d/data.txt", "ln -sf other.txt /srv/d/data.txt"} {
		_, touches := p.AnalyzeCommandAt(cmd, "/home/u")
		if len(touches) == 0 {
			t.Fatalf("%s: no touches: the link itself is written", cmd)
		}
		for _, tc := range touches {
			if strings.HasPrefix(tc.Path, "/srv/d/data.txt/") {
				t.Errorf("%s: touch %+v: ln writes nothing there (data.txt is the link)", cmd, tc)
			}
		}
	}
}
