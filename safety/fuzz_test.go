package safety

import (
	"errors"
	"path"
	"strings"
	"testing"
	"time"
)

func FuzzClassifyCommand(f *testing.F) {
	for _, tc := range commandCases {
		f.Add(tc.cmd)
	}
	for _, cmd := range append(destructive, risky...) {
		f.Add(cmd)
	}
	f.Add(strings.Repeat("$(", 50) + "x" + strings.Repeat(")", 50))
	f.Add("sed -e 's/a\\/b/' -e 'y/abc/xyz/;w /tmp/x' f")
	p := DefaultPolicy()
	f.Fuzz(func(t *testing.T, cmd string) {
		start := time.Now()
		a := p.ClassifyCommand(cmd)
		if a.Level < Safe || a.Level > High {
			t.Fatalf("level %d out of range", a.Level)
		}
		for _, r := range a.Reasons {
			if strings.Contains(r, "internal error") {
				t.Fatalf("ClassifyCommand(%q): %s", cmd, r)
			}
		}
		if a.Level > Safe && len(a.Reasons) == 0 {
			t.Fatalf("ClassifyCommand(%q) = %s without a reason", cmd, a)
		}
		if d := time.Since(start); d > 10*time.Second { // generous: fuzzing machines are busy; see fast_test.go
			t.Fatalf("ClassifyCommand took %v on %d bytes", d, len(cmd))
		}
	})
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"notes.txt", "~/.ssh/id_rsa", "/etc/shadow", "../x", "a/../../b", "/var/../etc",
		"~", "~/", "~bob", "/", "//etc//passwd", "./././x", "a/b/../../..", "x\x00"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	p := DefaultPolicy()
	const home = "/home/ops"
	f.Fuzz(func(t *testing.T, file string, op uint8) {
		fop := FileOp(op % 3)
		resolved, a, err := p.CheckPath(fop, file, home)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("CheckPath(%q) error %v does not wrap ErrRefused", file, err)
			}
			return
		}
		if !path.IsAbs(resolved) || path.Clean(resolved) != resolved {
			t.Fatalf("CheckPath(%q) resolved to %q, not absolute and clean", file, resolved)
		}
		if !path.IsAbs(file) && !strings.HasPrefix(resolved+"/", home+"/") {
			t.Fatalf("CheckPath(%q) escaped home: %q", file, resolved)
		}
		if a.Level < Safe || a.Level > High || a.Level > Safe && len(a.Reasons) == 0 {
			t.Fatalf("CheckPath(%q) = %s", file, a)
		}
		if fop != FileRead && a.Level == Safe {
			t.Fatalf("CheckPath(%s, %q) is safe", fop, file)
		}
		if fop != FileRead && p.underSystem(resolved, false) && a.Level != High {
			t.Fatalf("CheckPath(%s, %q) = %s under a system root", fop, file, a)
		}
	})
}
