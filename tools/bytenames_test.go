package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeHighBytes(t *testing.T) {
	for in, want := range map[string]string{
		`/tmp/bad\xffname.txt`: "/tmp/bad\xffname.txt",
		`a\xC3\xA9b`:           "a\u00e9b",
		`keep\x41\x7f`:         `keep\x41\x7f`, // below 80: as written
		`half\xf`:              `half\xf`,
		`x\xzz`:                `x\xzz`,
		`end\`:                 `end\`,
		`plain`:                "plain",
	} {
		if got := DecodeHighBytes(in); got != want {
			t.Errorf("DecodeHighBytes(%q) = %q, want %q", in, got, want)
		}
	}
	p := &ReadFileParams{FilePath: `~/bad\xffname`}
	decodePaths(p)
	if p.FilePath != "~/bad\xffname" {
		t.Errorf("decodePaths: %q", p.FilePath)
	}
}

// FuzzDecodeHighBytes: any path decodes without a panic, a path without
// "\x" is unchanged, and what agent shows of a name (each byte that is
// not UTF-8 as \xHH) decodes back to the name.
func FuzzDecodeHighBytes(f *testing.F) {
	for _, s := range []string{"bad\xffname", `a\x`, `\xff\x80`, "é\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := DecodeHighBytes(s)
		if !strings.Contains(s, `\x`) && d != s {
			t.Fatalf("%q changed to %q", s, d)
		}
		if strings.Contains(s, `\`) {
			return
		}
		var b strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				b.WriteString(`\x` + "0123456789abcdef"[s[i]>>4:s[i]>>4+1] + "0123456789abcdef"[s[i]&15:s[i]&15+1])
				i++
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
		}
		if got := DecodeHighBytes(b.String()); got != s {
			t.Fatalf("shown %q, decoded %q, want %q", b.String(), got, s)
		}
	})
}
