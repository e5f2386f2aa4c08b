package executor

import (
	"testing"
	"unicode/utf8"

	"github.com/autoshell/agent/tools"
)

func TestEscapeInvalidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"bad\xffname.txt\n": `bad\xffname.txt` + "\n",
		"ok é":              "ok é",
		"\xc3":              `\xc3`,
		"a\xc3\xa9\xe9":     `aé\xe9`,
	} {
		if got := escapeInvalidUTF8(in); got != want {
			t.Errorf("escapeInvalidUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzEscapeInvalidUTF8: what the model is shown is UTF-8, and a name
// without a backslash decodes back from it (tools.DecodeHighBytes).
func FuzzEscapeInvalidUTF8(f *testing.F) {
	f.Add("bad\xffname")
	f.Add("\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s string) {
		e := escapeInvalidUTF8(s)
		if !utf8.ValidString(e) {
			t.Fatalf("%q shown as %q: not UTF-8", s, e)
		}
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' {
				return
			}
		}
		if d := tools.DecodeHighBytes(e); d != s {
			t.Fatalf("%q shown as %q decodes to %q", s, e, d)
		}
	})
}
