package redact

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// A value as numbers in a text with no space or ':' (scanHex's shortcut
// for a text no dump's offset column is in) is hidden: bytes separated by
// commas (`od -An -tu1 -v | tr -s ' ' ,`, `jq -c explode`), an 8-byte
// value as one 64-bit word alone on its line (`od -An -tu8 | tr -d ' '`),
// in decimal and in octal, and 64-bit octal words one a line (up to 22
// digits). Each leaked before: the shortcut looked for two lines in a row
// that are one number of at most 20 digits.
func TestNumbersWithoutSpaces(t *testing.T) {
	const value = "hunter22"
	set := NewSet()
	set.Add("S", value, Known)
	var bytes []string
	for i := range len(value) {
		bytes = append(bytes, strconv.Itoa(int(value[i])))
	}
	word := binary.LittleEndian.Uint64([]byte(value))
	long := "hunter22Zq7Kx9Wm"
	set.Add("L", long, Known)
	w0, w1 := binary.LittleEndian.Uint64([]byte(long[:8])), binary.LittleEndian.Uint64([]byte(long[8:]))
	for _, c := range []struct{ name, numbers string }{
		{"commas", strings.Join(bytes, ",")},
		{"brackets", "[" + strings.Join(bytes, ",") + "]"},
		{"one word", strconv.FormatUint(word, 10)},
		{"one octal word", strconv.FormatUint(word, 8)},
		{"octal words one a line", strconv.FormatUint(w0, 8) + "\n" + strconv.FormatUint(w1, 8)},
	} {
		for _, text := range []string{c.numbers, "out=1\n" + c.numbers + "\nend\n"} {
			if got := set.String(text); strings.Contains(got, c.numbers) {
				t.Errorf("%s: %q is left in %q", c.name, c.numbers, got)
			}
		}
	}
}
