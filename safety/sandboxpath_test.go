package safety

import (
	"strings"
	"testing"
)

// TestWritePathForTheSandbox: one write list, as a permission and as what
// the sandbox opens; what Landlock cannot open as written is an error.
func TestWritePathForTheSandbox(t *testing.T) {
	for _, tc := range []struct{ in, glob, sandbox, err string }{
		{"~/extra", "~/extra/**", "~/extra", ""},
		{"/srv/app/", "/srv/app/**", "/srv/app", ""},
		{"/", "/**", "/", ""},
		{"~", "~/**", "~", ""},
		{"~/logs/*.log", "~/logs/*.log", "~/logs/*.log", ""},
		{"/srv/**", "/srv/**", "/srv", ""},
		{"~/*/x", "~/*/x", "", "the sandbox opens a directory"},
		{"/srv/*/logs/**", "/srv/*/logs/**", "", "the sandbox opens a directory"},
		{"/srv/a/**/b", "/srv/a/**/b", "", "the sandbox opens a directory"},
		{"rel", "", "", "must be absolute"},
		{"/a/../b", "", "", "`..`"},
		{"/a/**.log", "", "", "whole path element"},
		{"", "", "", "empty"},
	} {
		g, err := ParseWritePath(tc.in)
		if tc.glob == "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseWritePath(%q) = %q, %v; want an error with %q", tc.in, g, err, tc.err)
			}
			continue
		}
		if err != nil || g != tc.glob {
			t.Errorf("ParseWritePath(%q) = %q, %v; want %q", tc.in, g, err, tc.glob)
			continue
		}
		s, err := SandboxPath(g)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SandboxPath(%q) = %q, %v; want an error with %q", g, s, err, tc.err)
			}
		} else if err != nil || s != tc.sandbox {
			t.Errorf("SandboxPath(%q) = %q, %v; want %q", g, s, err, tc.sandbox)
		}
	}
}

// FuzzSandboxPath: what the sandbox opens for a write limit never reaches
// above the limit's fixed directory part.
func FuzzSandboxPath(f *testing.F) {
	for _, s := range []string{"~/extra", "/srv/*/x", "/a/b/*.log", "/", "~", "/x/**"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		g, err := ParseWritePath(in)
		if err != nil {
			return
		}
		s, err := SandboxPath(g)
		if err != nil {
			return
		}
		fixed := g
		if i := strings.IndexAny(g, "*?[\\"); i >= 0 {
			fixed = g[:i]
		}
		if !strings.HasPrefix(s, strings.TrimSuffix(fixed, "/")) && !(s == "/" && fixed == "/") {
			t.Fatalf("SandboxPath(%q) = %q: reaches above %q", g, s, fixed)
		}
	})
}
