package transport_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/autoshell/agent/transport"
)

// model is what a Capture must produce for the whole stream s.
func model(s []byte, limit int) string {
	if len(s) <= 2*limit {
		return string(s)
	}
	head, tail := s[:limit], s[len(s)-limit:]
	sep := ""
	if head[len(head)-1] != '\n' {
		sep = "\n"
	}
	return fmt.Sprintf("%s%s... [output truncated: %d bytes omitted] ...\n%s", head, sep, len(s)-2*limit, tail)
}

func TestCapture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int
		writes []string
	}{
		{"empty", 4, nil},
		{"short", 4, []string{"abc"}},
		{"exactly two limits", 4, []string{"abcdefgh"}},
		{"one over", 4, []string{"abcdefghi"}},
		{"many small", 3, strings.Split("a,b,c,d,e,f,g,h,i,j,k,l,m", ",")},
		{"huge single", 4, []string{strings.Repeat("x", 1000) + "TAIL"}},
		{"ring wraps", 5, []string{"12345", "678", "9abcdefg", "h", "ijklmnop", "qr"}},
		{"newline head", 2, []string{"a\n", "bbbbbb", "cd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := transport.NewCapture(tc.limit)
			var all bytes.Buffer
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				all.WriteString(w)
			}
			if got, want := c.String(), model(all.Bytes(), tc.limit); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			if c.Total() != int64(all.Len()) {
				t.Errorf("Total = %d, want %d", c.Total(), all.Len())
			}
			if c.Truncated() != (all.Len() > 2*tc.limit) {
				t.Errorf("Truncated = %v", c.Truncated())
			}
		})
	}
}

func TestCaptureDefaultLimit(t *testing.T) {
	c := transport.NewCapture(0)
	c.Write(bytes.Repeat([]byte("y"), 3*transport.DefaultCaptureLimit))
	if !strings.Contains(c.String(), fmt.Sprintf("%d bytes omitted", transport.DefaultCaptureLimit)) {
		t.Errorf("default limit not %d", transport.DefaultCaptureLimit)
	}
}

func FuzzCapture(f *testing.F) {
	f.Add([]byte("hello world, this is a stream"), uint8(4), uint8(3))
	f.Add([]byte{}, uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, limit, chunk uint8) {
		l, k := int(limit%64)+1, int(chunk%17)+1
		c := transport.NewCapture(l)
		for i := 0; i < len(data); i += k {
			c.Write(data[i:min(i+k, len(data))])
		}
		if got, want := c.String(), model(data, l); got != want {
			t.Fatalf("limit %d chunk %d: got %q want %q", l, k, got, want)
		}
	})
}

func BenchmarkCapture(b *testing.B) {
	c := transport.NewCapture(0)
	buf := bytes.Repeat([]byte("z"), 32<<10)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		c.Write(buf)
	}
}
