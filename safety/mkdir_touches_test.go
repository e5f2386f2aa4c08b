package safety

import (
	"slices"
	"testing"
)

// mkdir's operands are directories it creates, with -p their missing
// parents too; other writers' operands are files.
func TestMkdirTouches(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string][]Touch{
		"mkdir /srv/x":           {{Path: "/srv/x", Op: FileWrite, Dir: true}},
		"mkdir -p /srv/x/y":      {{Path: "/srv/x/y", Op: FileWrite, Dir: true, Parents: true}},
		"mkdir --parents /srv/x": {{Path: "/srv/x", Op: FileWrite, Dir: true, Parents: true}},
		"mkdir -vp /srv/x":       {{Path: "/srv/x", Op: FileWrite, Dir: true, Parents: true}},
		"mkdir -m 700 /srv/x":    {{Path: "/srv/x", Op: FileWrite, Dir: true}},
		"mkdir -m700 -p /srv/x":  {{Path: "/srv/x", Op: FileWrite, Dir: true, Parents: true}},
		"mkdir -mp /srv/x":       nil, // -m's value is "p": a bad mode; whatever it is, no -p
		"touch /srv/x":           {{Path: "/srv/x", Op: FileWrite}},
		"mkdir -p d && echo x > d/f":// relative: from where the step starts
		{{Path: "d", Op: FileWrite, Dir: true, Parents: true}, {Path: "d/f", Op: FileWrite}},
	} {
		_, got := p.AnalyzeCommand(cmd)
		if want == nil {
			for _, g := range got {
				if g.Parents {
					t.Errorf("%s: %+v has Parents", cmd, g)
				}
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: touches %+v, want %+v", cmd, got, want)
		}
	}
}
