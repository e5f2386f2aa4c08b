package redact

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
)

// needles are the strings each view looks for, and the secret each shows.
type needles struct {
	squeezed, hex []string
	sqOf, hexOf   []int
}

// add adds the shapes of value v (secret number i): without white space,
// as is and reversed (the squeezed views: as is, and with URL and
// quoted-printable escapes decoded and dumps' character columns); hex of the value
// and of its reverse, and with each two bytes swapped as hexdump's and
// od -x's 16-bit words show them, at both alignments, and each four as
// od -t x4's and xxd -e's 32-bit words, at the four (hex view); base64
// at the three alignments the value can have in a longer stream, in the
// standard and the URL alphabet, and base32 at the five. The base64 and
// base32 shapes are looked for in the squeezed view, by its automaton: a
// byte outside their alphabet is in none of them, so a match cannot run
// across one, as in a view of their own; one automaton less a byte.
// The squeezed needles are in lower case: that automaton reads letters
// without their case (foldCase), so that a value put in upper or lower
// case or with its case swapped (tr a-z A-Z, ${x^^}, str.upper()) is
// still found, in each of its shapes there.
func (n *needles) add(i int, v string) {
	addOnce := func(list *[]string, of *[]int, s string) {
		if len(s) < minNeedle {
			return
		}
		if list == &n.squeezed {
			s = lowerASCII(s)
		}
		*list, *of = append(*list, s), append(*of, i)
	}
	sq := squeeze(v)
	addOnce(&n.squeezed, &n.sqOf, sq)
	// with backslashes before its special bytes, as printf %q, a JSON or
	// Python string shows it
	for _, e := range escapedForms(v) {
		addOnce(&n.squeezed, &n.sqOf, squeeze(e))
	}
	if r := reverse(sq); r != sq {
		addOnce(&n.squeezed, &n.sqOf, r)
	}
	addOnce(&n.hex, &n.hexOf, hex.EncodeToString([]byte(v)))
	addOnce(&n.hex, &n.hexOf, hex.EncodeToString([]byte(reverse(v))))
	addOnce(&n.hex, &n.hexOf, hex.EncodeToString(swapPairs(v)))
	addOnce(&n.hex, &n.hexOf, hex.EncodeToString(swapPairs(v[1:])))
	// 32-bit words (od -t x4, xxd -e, hexdump -e '4/4 "%08x "'), at
	// the four alignments; two words at least (one word's 8 digits are
	// in any hash, and would make the hex filter's step shorter)
	for k := range 4 {
		if w := swapWords(v[k:], 4); len(w) >= 8 {
			addOnce(&n.hex, &n.hexOf, hex.EncodeToString(w))
		}
	}
	for k := range 3 {
		b := base64Inner(v, k)
		addOnce(&n.squeezed, &n.sqOf, b)
		if u := urlAlphabet.Replace(b); u != b {
			addOnce(&n.squeezed, &n.sqOf, u)
		}
	}
	for k := range 5 {
		addOnce(&n.squeezed, &n.sqOf, base32Inner(v, k))
	}
}

// base32Inner is base64Inner for base32: the characters of the base32 of
// a stream holding v at offset k (mod 5) whose five bits all come from v.
func base32Inner(v string, k int) string {
	enc := base32.StdEncoding.EncodeToString(append(make([]byte, k), v...))
	from, to := 0, 0
	for j := range len(enc) {
		if 5*j >= 8*k && 5*j+5 <= 8*(k+len(v)) {
			if to == 0 {
				from = j
			}
			to = j + 1
		}
	}
	return enc[from:to]
}

// escapers put a backslash before the bytes a quoting escapes: bash's
// printf %q (and ${x@Q}'s unquoted words), JSON, Python's repr.
var escapers = []*strings.Replacer{
	strings.NewReplacer("!", `\!`, "$", `\$`, "&", `\&`, ",", `\,`, "^", `\^`, "*", `\*`, "(", `\(`, ")", `\)`, "[", `\[`, "]", `\]`,
		"{", `\{`, "}", `\}`, "|", `\|`, ";", `\;`, "<", `\<`, ">", `\>`, "?", `\?`, "`", "\\`", `"`, `\"`, "'", `\'`, `\`, `\\`, " ", `\ `),
	strings.NewReplacer(`"`, `\"`, `\`, `\\`),
	strings.NewReplacer("'", `\'`, `\`, `\\`),
}

// escapedForms are v as each escaper shows it, where that differs from v
// (and from the forms before it); a leading # or ~ escaped too, as %q
// does; and with a backslash before every byte.
func escapedForms(v string) []string {
	var out []string
	for i, r := range escapers {
		e := r.Replace(v)
		if i == 0 && (strings.HasPrefix(v, "#") || strings.HasPrefix(v, "~")) {
			e = `\` + e
		}
		if e != v && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	// a backslash before every byte (sed 's/./\\&/g')
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		b.WriteByte('\\')
		b.WriteByte(v[i])
	}
	return append(out, b.String())
}

// urlAlphabet turns standard base64 into the URL alphabet's.
var urlAlphabet = strings.NewReplacer("+", "-", "/", "_")

// minNeedle is the shortest shape looked for: a shorter one (the base64
// of a value at the shortest MinLen, at its worst alignment, keeps 8
// characters) would hide ordinary text.
const minNeedle = 8

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// swapPairs is v's whole two-byte pairs, each swapped.
func swapPairs(v string) []byte {
	b := make([]byte, 0, len(v))
	for i := 0; i+1 < len(v); i += 2 {
		b = append(b, v[i+1], v[i])
	}
	return b
}

// swapWords is v's whole w-byte words, each's bytes reversed: how a
// little-endian machine's od -t x4 shows them.
func swapWords(v string, w int) []byte {
	b := make([]byte, 0, len(v))
	for i := 0; i+w <= len(v); i += w {
		for j := i + w - 1; j >= i; j-- {
			b = append(b, v[j])
		}
	}
	return b
}

// base64Inner is the part of the base64 of a stream holding v at offset
// k (mod 3) that depends on v's bytes only: the characters whose six bits
// all come from v.
func base64Inner(v string, k int) string {
	enc := base64.StdEncoding.EncodeToString(append(make([]byte, k), v...))
	from, to := 0, 0
	for j := range len(enc) {
		if 6*j >= 8*k && 6*j+6 <= 8*(k+len(v)) {
			if to == 0 {
				from = j
			}
			to = j + 1
		}
	}
	return enc[from:to]
}

// lowerASCII is s with its ASCII letters in lower case (its other bytes
// as they are: s need not be UTF-8).
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// squeeze is s without what the squeezed view leaves out (white space,
// NUL; bytes: s need not be UTF-8).
func squeeze(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if !sqOut(s[i]) {
			b = append(b, s[i])
		}
	}
	return string(b)
}
