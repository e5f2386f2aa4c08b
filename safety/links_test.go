package safety

import "testing"

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
