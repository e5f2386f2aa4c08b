package redact

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// leak reports how out still shows secret, or "": an oracle written apart
// from the matcher, from Go's decoders. It looks for any 8-byte window of
// the secret (or of its reverse) in the text without white space, with
// URL escapes undone, in every run of hex digits (separators and dump
// offsets aside, at both nibble alignments, and as 16- and 32-bit words
// swapped),
// and in every run of base64 (standard or URL alphabet, at the four
// character alignments).
func leak(out, secret string) string {
	const w = 8
	var windows []string
	for _, s := range []string{secret, reverse(secret)} {
		s = noSpace(s)
		for i := 0; i+w <= len(s); i++ {
			windows = append(windows, s[i:i+w])
		}
	}
	has := func(b []byte) bool {
		// (UTF-16's NULs left out)
		b = bytes.ReplaceAll(b, []byte{0}, nil)
		for _, win := range windows {
			if bytes.Contains(b, []byte(win)) {
				return true
			}
		}
		return false
	}
	squeezed := noSpace(out)
	if has([]byte(squeezed)) {
		return "clear"
	}
	if has([]byte(urlDecode(noSpace(out)))) {
		return "url/qp"
	}
	// a case change (tr a-z A-Z, ${x^^}, the case swapped)
	lowered := bytes.ToLower([]byte(noSpace(out)))
	for _, win := range windows {
		if bytes.Contains(lowered, bytes.ToLower([]byte(win))) {
			return "case changed"
		}
	}
	// every k-th byte (a value's characters with a separator between
	// them: sed 's/./&-/g', Python's list of its characters)
	for k := 2; k <= 6; k++ {
		for off := range k {
			var b []byte
			for i := off; i < len(squeezed); i += k {
				b = append(b, squeezed[i])
			}
			if has(b) {
				return "one byte in " + strconv.Itoa(k)
			}
		}
	}
	// od -c and hexdump -C / xxd character columns, by line
	var cols strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if m := dumpCharsRE.FindStringSubmatch(line); m != nil {
			cols.WriteString(m[1] + m[2] + m[3])
		}
	}
	if has([]byte(noSpace(cols.String()))) {
		return "dump characters"
	}
	// octal and decimal dumps (od -b, -t u1, -o, -d, -i; hexdump -d),
	// their offsets and '*' lines left out
	if numericLeak(out, has) {
		return "octal or decimal dump"
	}
	var hexRuns strings.Builder
	for _, line := range strings.Split(out, "\n") {
		line = offsetRE.ReplaceAllString(line, "")
		line = charColRE.ReplaceAllString(line, "")
		for _, run := range hexRunRE.FindAllString(line, -1) {
			hexRuns.WriteString(strings.ToLower(hexSepRE.ReplaceAllString(run, "")))
		}
		hexRuns.WriteString(" ")
	}
	for _, run := range strings.Fields(hexRuns.String()) {
		for off := range 2 {
			r := run[off:]
			b, _ := hex.DecodeString(r[:len(r)/2*2])
			if has(b) || has(swapPairs(string(b))) || len(b) > 1 && has(swapPairs(string(b[1:]))) {
				return "hex"
			}
			for k := range min(4, len(b)) {
				if has(swapWords(string(b[k:]), 4)) {
					return "hex (32-bit words)"
				}
			}
		}
	}
	b64 := strings.NewReplacer("-", "+", "_", "/").Replace(noSpace(out))
	for _, run := range b64RunRE.FindAllString(b64, -1) {
		for off := range 4 {
			if off >= len(run) {
				break
			}
			r := run[off:]
			b, _ := base64.RawStdEncoding.DecodeString(r[:len(r)/4*4])
			if has(b) {
				return "base64"
			}
		}
	}
	for _, run := range b32RunRE.FindAllString(noSpace(out), -1) {
		for off := range 8 {
			if off >= len(run) {
				break
			}
			r := run[off:]
			b, _ := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(r[:len(r)/8*8])
			if has(b) {
				return "base32"
			}
		}
	}
	return ""
}

var (
	hexRunRE    = regexp.MustCompile(`(?i)(?:(?:0x|\\x)?[0-9a-f][\s:,._-]*){16,}`)
	hexSepRE    = regexp.MustCompile(`(?i)0x|\\x|[^0-9a-f]`)
	offsetRE    = regexp.MustCompile(`^\s*[0-9a-fA-F]{6,16}[: ]`)
	charColRE   = regexp.MustCompile(`\s\s[|>].*$|^(\s*[0-9a-f]+: [0-9a-f ]+?)  .*$`)
	dumpCharsRE = regexp.MustCompile(`^[0-9a-f]{6,16}  .*\|(.*)\|$|^[0-9a-f]{6,16}: [0-9a-f ]+  (.*)$|^[0-7]{7}((?:\s+\S+)+)$`)
	b64RunRE    = regexp.MustCompile(`[A-Za-z0-9+/]{8,}`)
	b32RunRE    = regexp.MustCompile(`[A-Z2-7]{8,}`)
)

// numericLeak reports whether out's numbers, read as od's octal or
// decimal bytes or little-endian 16- or 32-bit words (the offset column
// and '*' lines left out, numbers separated by white space or commas),
// hold a window has finds.
func numericLeak(out string, has func([]byte) bool) bool {
	var tokens []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '[' || r == ']' })
		if len(f) > 1 && len(f[0]) == 7 && strings.Trim(f[0], "01234567") == "" {
			f = f[1:]
		}
		if line == "*" {
			continue
		}
		tokens = append(tokens, f...)
	}
	for _, base := range []int{8, 10} {
		for _, w := range []int{1, 2, 4, 8} {
			var b []byte
			for _, tok := range tokens {
				x, err := strconv.ParseInt(tok, base, 64)
				if u, uerr := strconv.ParseUint(tok, base, 64); w == 8 && uerr == nil {
					x, err = int64(u), nil
				}
				if err != nil || w < 8 && (x < -(1<<(8*w-1)) || x >= 1<<(8*w)) {
					if has(b) {
						return true
					}
					b = b[:0]
					continue
				}
				for j := range w {
					b = append(b, byte(x>>(8*j)))
				}
			}
			if has(b) {
				return true
			}
		}
	}
	return false
}

// noSpace is s without ASCII white space, other bytes (valid UTF-8 or
// not) kept.
func noSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && unicode.IsSpace(r) }), "")
}

// urlDecode undoes %XX and =XX escapes and quoted-printable soft breaks.
func urlDecode(s string) string {
	s = strings.ReplaceAll(s, "=\n", "")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if (s[i] == '%' || s[i] == '=') && i+2 < len(s) {
			if v, err := hex.DecodeString(s[i+1 : i+3]); err == nil {
				b.WriteByte(v[0])
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
