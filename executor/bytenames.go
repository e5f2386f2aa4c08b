package executor

import (
	"strings"
	"unicode/utf8"
)

// Names that are not UTF-8 (a file called bad<0xff>name.txt): what a step
// shows the model and the operator writes each byte that is not UTF-8 as
// \xHH (JSON would make it U+FFFD, and the name would be lost); the file
// tools' paths take \xHH (HH 80–ff) back as that byte (tools.DecodeHighBytes),
// so the model can name the file it was shown.

// escapeInvalidUTF8 writes each byte of s that is not UTF-8 as \xHH.
func escapeInvalidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[s[i]>>4])
			b.WriteByte("0123456789abcdef"[s[i]&15])
			i++
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}
