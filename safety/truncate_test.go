package safety

import "testing"

func TestTruncateSize(t *testing.T) {
	for _, tc := range []struct {
		in        string
		n         int64
		rel, good bool
	}{
		{"0", 0, false, true}, {"100", 100, false, true}, {"1K", 1024, false, true}, {"1KB", 1000, false, true},
		{"1KiB", 1024, false, true}, {"10M", 10 << 20, false, true}, {"1G", 1 << 30, false, true}, {"1g", 1 << 30, false, true},
		{"+1M", 1 << 20, true, true}, {"<5", 5, true, true}, {"%4K", 4096, true, true},
		{"", 0, false, false}, {"x", 0, false, false}, {"1Q", 0, false, false}, {"1KX", 0, false, false},
		{"99999999999999999999", 0, false, false}, {"9Y", 0, false, false}, {"+", 0, true, false},
	} {
		n, rel, good := truncateSize(tc.in)
		if good != tc.good || good && (n != tc.n || rel != tc.rel) {
			t.Errorf("truncateSize(%q) = %d, %v, %v; want %d, %v, %v", tc.in, n, rel, good, tc.n, tc.rel, tc.good)
		}
	}
}

// FuzzTruncateSize: any SIZE parses or is refused, never a panic, and a
// parsed size is never negative.
func FuzzTruncateSize(f *testing.F) {
	for _, s := range []string{"1G", "+10M", "%4KiB", "9Y", "00000000000000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, _, ok := truncateSize(s); ok && n < 0 {
			t.Fatalf("%q: %d", s, n)
		}
	})
}
