package become

import (
	"strings"
	"testing"
)

// The host's answer to inspectScript is outside input: only what the
// script prints is accepted.
func TestParseInspection(t *testing.T) {
	for _, tc := range []struct {
		out  string
		ok   bool
		read string // content taken; "" for none
	}{
		{"/srv/f\x00-\x00", true, ""},
		{"/srv/f\x0012 81a4 1700000000 0 0 1\x00", true, ""},
		{"/srv/f\x0012 81a4 1700000000 0 0 1\x00c\x00hello\x00world", true, "hello\x00world"},
		{"/srv/f\x0012 81a4 1700000000 0 0 1\x00c\x00", true, "\x00"[:0]},
		{"/srv/f\x0012 81a4 1700000000 0 0 1\x00c\x00" + strings.Repeat("x", 101), true, ""}, // grew past readMax
		{"", false, ""},
		{"srv/f\x00-\x00", false, ""},                   // not absolute
		{"/srv/../f\x00-\x00", false, ""},               // not clean
		{"/srv/f\x00-\x00junk", false, ""},              // content of nothing
		{"/srv/f\x0012 81a4 1700000000\x00", false, ""}, // no owner
		{"/srv/f\x0012 81a4 1700000000 0 -1 1\x00", false, ""},
		{"/srv/f\x0012 81a4 1700000000 0 0\x00", false, ""},    // no link count
		{"/srv/f\x0012 81a4 1700000000 0 0 -2\x00", false, ""}, // negative link count
		{"/srv/f\x00x 81a4 1700000000 0 0 1\x00", false, ""},
		{"/srv/f\x0012 81a4 1700000000 0 0 1\x00d\x00x", false, ""},
		{"/srv/f", false, ""},
	} {
		in, err := parseInspection([]byte(tc.out), 100)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.out, err, tc.ok)
			continue
		}
		if err == nil && in.Info != nil && in.Links != 1 {
			t.Errorf("%q: links %d, want 1", tc.out, in.Links)
		}
		if err == nil && string(in.Content) != tc.read {
			t.Errorf("%q: content %q, want %q", tc.out, in.Content, tc.read)
		}
	}
}

func FuzzParseInspection(f *testing.F) {
	f.Add([]byte("/srv/f\x0012 81a4 1700000000 0 0 1\x00c\x00hello"), int64(100))
	f.Add([]byte("/srv/f\x00-\x00"), int64(0))
	f.Fuzz(func(t *testing.T, out []byte, readMax int64) {
		in, err := parseInspection(out, readMax)
		if err != nil {
			return
		}
		if !strings.HasPrefix(in.Real, "/") || in.Read && int64(len(in.Content)) > readMax || in.Read && in.Info == nil {
			t.Errorf("%q: accepted %+v", out, in)
		}
	})
}
