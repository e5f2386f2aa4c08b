package redact

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// FuzzShapes encodes a known secret in one of the supported shapes,
// between random texts, and fails if the oracle finds it in the redacted
// text. The shape starts and ends at a separator byte the fuzzer picks
// (white space or punctuation): a shape glued to random text could be
// read as part of a URL escape or a dump's columns, which agent does not
// promise. base64 is of the whole stream (prefix, secret, suffix), so the
// secret lands at any alignment.
func FuzzShapes(f *testing.F) {
	f.Add("before ", " after", "Zq7#Kx9Wm2R/t5+Y", uint8(0), uint8(0))
	f.Add("x", "", "correct horse battery", uint8(3), uint8(1))
	f.Add("ab", "cd", "0123456789abcdef", uint8(5), uint8(2))
	f.Add("abc", "", "Zq7#Kx9Wm2R/t5+Y", uint8(10), uint8(0))
	f.Add("x ", " y", "Zq7!Kx9(Wm2)R$t5+Y", uint8(11), uint8(0))
	f.Add("pre", "post", "DotEnvDq/9+4=1Xc07", uint8(13), uint8(0))
	f.Add("pre", "post", "DotEnvDq/9+4=1Xc07", uint8(11+nShapes), uint8(1))
	for k := range numericForms {
		f.Add("x", "yz", "DotEnvDq/9+4=1Xc07", uint8(14+nShapes*k), uint8(0))
	}
	f.Add("pre", "post", "DotEnvDq/9+4=1Xc07", uint8(15), uint8(0))
	f.Add("pre", "post", "DotEnvDq/9+4=1Xc07", uint8(16), uint8(0))
	f.Add("pre", "post", "DotEnvDq/9+4=1Xc07", uint8(16+nShapes), uint8(1))
	f.Add("pre", "post", "DotEnvDq/9+4=1Xc07", uint8(17), uint8(2))
	for k := range interleaveSeps {
		f.Add("pre ", " post", "SqliteKv-2208bh111", uint8(18+nShapes*k), uint8(0))
	}
	f.Add("pre", "post", "DotEnvDq/9+4=1Xc07", uint8(19), uint8(0))
	f.Add("7\n", "\n12", "DotEnvDq/9+4=1Xc07", uint8(20), uint8(0))
	f.Fuzz(func(t *testing.T, prefix, suffix, secret string, shape, sep uint8) {
		secret = strings.TrimSpace(secret)
		// (a Known value shorter than MinLen without its white space is hidden
		// as it is only)
		if len(squeeze(secret)) < MinLen || len(secret) > maxPiece || strings.ContainsAny(secret, "\r\n\t\v\f") || strings.Contains(secret, "-----BEGIN") {
			return
		}
		set := NewSet()
		if !set.Add("S", secret, Known) {
			return
		}
		seps := " \n\t,;|\"'"
		d := string(seps[int(sep)%len(seps)])
		var text string
		switch shape % nShapes {
		case 0:
			text = prefix + d + secret + d + suffix
		case 1: // split on white space
			var b strings.Builder
			for i := 0; i < len(secret); i++ {
				b.WriteByte(secret[i])
				if i%3 == 2 {
					b.WriteString("\n ")
				}
			}
			text = prefix + d + b.String() + d + suffix
		case 2:
			text = base64.StdEncoding.EncodeToString([]byte(prefix + secret + suffix))
		case 3:
			text = base64.URLEncoding.EncodeToString([]byte(prefix + secret + suffix))
		case 4:
			text = prefix + d + hex.EncodeToString([]byte(secret)) + d + suffix
		case 5:
			text = prefix + d + strings.ToUpper(hex.EncodeToString([]byte(secret))) + d + suffix
		case 6:
			text = prefix + d + reverse(secret) + d + suffix
		case 7:
			text = prefix + d + url.PathEscape(secret) + d + suffix
		case 8: // hex bytes with separators, as xxd -p | fold or hexdump's
			h := hex.EncodeToString([]byte(secret))
			var b strings.Builder
			for i := 0; i < len(h); i += 2 {
				b.WriteString(h[i:i+2] + ":")
			}
			text = prefix + d + b.String() + d + suffix
		case 9: // quoted-printable: every byte escaped, soft breaks
			var b strings.Builder
			for i := 0; i < len(secret); i++ {
				b.WriteString("=" + strings.ToUpper(hex.EncodeToString([]byte{secret[i]})))
				if i%5 == 4 {
					b.WriteString("=\n")
				}
			}
			text = prefix + d + b.String() + d + suffix
		case 10: // base32 of the whole stream: the secret at any of five alignments
			text = base32.StdEncoding.EncodeToString([]byte(prefix + secret + suffix))
		case 11: // backslashes before shell metacharacters and quotes, as printf %q
			var b strings.Builder
			if strings.HasPrefix(secret, "#") || strings.HasPrefix(secret, "~") {
				b.WriteByte('\\') // as bash's %q escapes a word's leading # or ~
			}
			for i := 0; i < len(secret); i++ {
				if strings.IndexByte("!$&,^*()[]{}|;<>?`\"'\\ ", secret[i]) >= 0 {
					b.WriteByte('\\')
				}
				b.WriteByte(secret[i])
			}
			text = prefix + d + b.String() + d + suffix
		case 12: // od -t x4: 32-bit little-endian words, the secret at any alignment
			if len(secret) < 11 {
				return // two whole words at every alignment (shapes.go)
			}
			text = odX4(prefix + secret + suffix)
		case 13: // a case change: upper case, or each letter's case swapped
			text = prefix + d + asciiUpper(secret) + d + suffix // as tr a-z A-Z: other bytes as they are
			if shape/nShapes%2 == 1 {
				text = prefix + d + swapCase(secret) + d + suffix
			}
		case 14: // an octal or decimal dump of the stream: the secret at any alignment
			f := numericForms[int(shape/nShapes)%len(numericForms)]
			if len(secret) < 2*f.width+f.width-1 {
				return // two whole words at every alignment (shapes.go)
			}
			text = numericDump(prefix+secret+suffix, f)
		case 15: // a hex dump without -v: a line the same as the one before it is a '*'
			if len(secret) < 12 {
				return // a window of 8 bytes on either side of the '*'
			}
			p := (prefix + "0123456789ab")[:12] + secret[:4]
			text = squeezedDump(p + p + secret[4:] + suffix)
		case 16: // UTF-16, little- or big-endian
			text = prefix + d + toUTF16(secret, shape/nShapes%2 == 1) + d + suffix
		case 17, 19: // hex with '.' or '_' between its bytes
			h, hs := hex.EncodeToString([]byte(secret)), "."
			if shape%nShapes == 19 {
				hs = "_"
			}
			var b strings.Builder
			for i := 0; i < len(h); i += 2 {
				b.WriteString(h[i:i+2] + hs)
			}
			text = prefix + d + b.String() + d + suffix
		case 18: // a separator between the value's own characters
			if interleavedHas(prefix+d, secret) || interleavedHas(d+suffix, secret) {
				return // the random text holds it so itself ("0&0&0…")
			}
			sepr := interleaveSeps[int(shape/nShapes)%len(interleaveSeps)]
			var b strings.Builder
			for i := 0; i < len(secret); i++ {
				b.WriteByte(secret[i])
				b.WriteString(sepr)
			}
			text = prefix + d + b.String() + d + suffix
		case 20: // decimal bytes one a line, no space anywhere
			var b strings.Builder
			for i := 0; i < len(secret); i++ {
				b.WriteString(strconv.Itoa(int(secret[i])) + "\n")
			}
			text = prefix + "\n" + b.String() + suffix
		}
		got := set.String(text)
		if shape%nShapes == 11 {
			// the secret without its backslashes, more times than the
			// random text around it holds it (a secret "0,\\\\" between
			// "0" and ","), outside the marks ("AC\\\\": [REDACTED])
			unescaped := func(s string) string { return noSpace(strings.ReplaceAll(s, `\`, "")) }
			u := unescaped(secret)
			n := 0
			for _, part := range strings.Split(got, Redacted) {
				n += strings.Count(unescaped(part), u)
			}
			if u != "" && n > strings.Count(unescaped(prefix+d), u)+strings.Count(unescaped(d+suffix), u) {
				t.Fatalf("shape 11 leaks %q:\n in  %q\n out %q", secret, text, got)
			}
			return
		}
		if how := wholeLeak(got, secret, shape%nShapes); how {
			t.Fatalf("shape %d leaks %q:\n in  %q\n out %q", shape%nShapes, secret, text, got)
		}
	})
}

// wholeLeak reports whether the secret, whole, is still in out after the
// inverse of the shape it was given: random text may hold bits of it,
// but the secret itself must be gone.
func wholeLeak(out, secret string, shape uint8) bool {
	sq := noSpace(secret)
	switch shape {
	case 0, 1:
		return strings.Contains(noSpace(out), sq)
	case 2, 3:
		s := strings.NewReplacer("-", "+", "_", "/").Replace(out)
		for _, run := range b64RunRE.FindAllString(s, -1) {
			for off := range 4 {
				if off < len(run) {
					r := run[off:]
					b, _ := base64.RawStdEncoding.DecodeString(r[:len(r)/4*4])
					if strings.Contains(string(b), secret) {
						return true
					}
				}
			}
		}
		return false
	case 16:
		return strings.Contains(noSpace(strings.ReplaceAll(out, "\x00", "")), sq)
	case 18:
		return interleavedHas(out, secret)
	case 20:
		return numericLeak(out, func(b []byte) bool { return bytes.Contains(b, []byte(secret)) })
	case 4, 5, 8, 17, 19:
		h := strings.ToLower(strings.NewReplacer(":", "", ".", "", "_", "").Replace(out))
		return strings.Contains(h, hex.EncodeToString([]byte(secret)))
	case 6:
		return strings.Contains(out, reverse(secret))
	case 13:
		return strings.Contains(asciiLower(noSpace(out)), asciiLower(sq))
	case 14:
		return numericLeak(out, func(b []byte) bool { return bytes.Contains(b, []byte(secret)) })
	case 15:
		var b strings.Builder
		for _, line := range strings.Split(out, "\n") {
			if line != "*" {
				b.WriteString(line)
			}
		}
		h := strings.ReplaceAll(b.String(), " ", "")
		return strings.Contains(h, hex.EncodeToString([]byte(secret)))
	case 7, 9:
		return strings.Contains(noSpace(urlDecode(out)), sq)
	case 12:
		var b strings.Builder
		for _, w := range strings.Fields(out) {
			if x, err := hex.DecodeString(w); err == nil && len(w) == 8 {
				b.Write([]byte{x[3], x[2], x[1], x[0]})
			}
		}
		return strings.Contains(b.String(), secret)
	case 10:
		for _, run := range b32RunRE.FindAllString(out, -1) {
			for off := range 8 {
				if off < len(run) {
					r := run[off:]
					b, _ := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(r[:len(r)/8*8])
					if strings.Contains(string(b), secret) {
						return true
					}
				}
			}
		}
		return false
	}
	return false
}

// asciiUpper changes the case of ASCII letters only, as tr does
// (strings.ToUpper makes each byte of invalid UTF-8 a U+FFFD); its
// inverse is patterns.go's asciiLower.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// interleavedHas reports whether one byte in k of s, for k from 2 to
// 6, at some offset, holds secret.
func interleavedHas(s, secret string) bool {
	for k := 2; k <= 6; k++ {
		for off := range k {
			var b strings.Builder
			for i := off; i < len(s); i += k {
				b.WriteByte(s[i])
			}
			if strings.Contains(b.String(), secret) {
				return true
			}
		}
	}
	return false
}

// nShapes is how many shapes FuzzShapes gives a secret.
const nShapes = 21

// interleaveSeps are the separators FuzzShapes's shape 18 puts between a
// value's characters (sed 's/./&-/g', paste -sd, Python's list(s)).
var interleaveSeps = []string{"-", ".", "_", ",", "|", ", ", "::", "', '", "+", "/"}

// numericForm is a way od shows numbers: base 8 or 10, 1-, 2- or 4-byte
// little-endian words, digits padded with zeros to pad (hexdump -d's 5
// for 16-bit words) or not, a separator between numbers.
type numericForm struct {
	base, width, pad int
	sep              string
}

var numericForms = []numericForm{
	{8, 1, 3, " "},   // od -b
	{10, 1, 0, " "},  // od -t u1
	{8, 2, 6, " "},   // od, od -o
	{10, 2, 0, " "},  // od -d
	{10, 2, 5, " "},  // hexdump -d
	{10, 4, 0, " "},  // od -i
	{8, 4, 11, " "},  // od -t o4
	{10, 8, 0, " "},  // od -l
	{10, 1, 0, ", "}, // Python's list(b"…")
}

// numericDump is od -An's dump of s in form f: eight numbers a line,
// each line starting with a space (as od -An's do: a line's first number
// is no offset), the last word padded with zeros.
func numericDump(s string, f numericForm) string {
	var b strings.Builder
	b.WriteByte(' ')
	for i, n := 0, 0; i < len(s); i, n = i+f.width, n+1 {
		x := uint64(0)
		for j := f.width - 1; j >= 0; j-- {
			x <<= 8
			if i+j < len(s) {
				x |= uint64(s[i+j])
			}
		}
		num := strconv.FormatUint(x, f.base)
		if len(num) < f.pad {
			num = strings.Repeat("0", f.pad-len(num)) + num
		}
		if n > 0 {
			b.WriteString(f.sep)
			if n%8 == 0 && f.sep == " " {
				b.WriteString("\n ")
			}
		}
		b.WriteString(num)
	}
	return b.String()
}

// squeezedDump is od -An -tx1's dump of s without -v: 16 bytes a line,
// a line the same as the one before it shown as one '*'.
func squeezedDump(s string) string {
	var b strings.Builder
	prev, star := "", false
	for i := 0; i < len(s); i += 16 {
		line := s[i:min(i+16, len(s))]
		if line == prev {
			if !star {
				b.WriteString("*\n")
			}
			star = true
			continue
		}
		prev, star = line, false
		for j := 0; j < len(line); j++ {
			fmt.Fprintf(&b, " %02x", line[j])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// toUTF16 is s's bytes as UTF-16 code units, little- or big-endian.
func toUTF16(s string, big bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if big {
			b.WriteByte(0)
		}
		b.WriteByte(s[i])
		if !big {
			b.WriteByte(0)
		}
	}
	return b.String()
}

// swapCase is s with each ASCII letter's case swapped.
func swapCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// odX4 is od -t x4's dump of s on a little-endian machine: an offset,
// then four 32-bit words a line (the last one padded with zeros).
func odX4(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += 16 {
		fmt.Fprintf(&b, "%07o", i)
		for j := i; j < i+16 && j < len(s); j += 4 {
			var w [4]byte
			copy(w[:], s[j:min(j+4, len(s))])
			fmt.Fprintf(&b, " %02x%02x%02x%02x", w[3], w[2], w[1], w[0])
		}
		b.WriteByte('\n')
	}
	return b.String()
}
