package confine

import (
	"errors"
	"strconv"
	"strings"
)

// The encoded Ruleset (Encode, DecodeRuleset) is one line, so that the
// set-up prints the sandbox's rules on one line of its answer: words
// separated by single spaces, the header "agent-rules VERSION", then
// items, each a keyword and a fixed number of words, in this order:
//
//	write                         Spec.Write
//	net                           Spec.Net
//	account-homes                 Spec.AccountHomes
//	caps MODE                     Spec.Caps
//	syscalls MODE                 Spec.Syscalls
//	no-write P ... secret P       Spec's lists (no-write, no-read, public, device, writable, readable,
//	                              hide-dots, dot-ok, find-in, secret, links-in), in order
//	dir P RIGHTS, file P RIGHTS   Rules, in order (RIGHTS in decimal)
//	stamp P MTIME NAMES           Stamps, in order; "hot" for a Hot one, NAMES "-" when empty
//
// A path P is written with every byte outside '!'..'~', and '%', as %XX
// (upper-case hexadecimal): no word holds a space or a line break. The
// encoding is canonical: DecodeRuleset accepts nothing Encode would not
// write (numbers and escapes in one form only, items in order), so it
// never has to choose between two readings of a file.

// rulesetMagic starts an encoded Ruleset.
const rulesetMagic = "agent-rules"

// Item keywords, in the order Encode writes them (their rank).
var rulesetItems = []struct {
	word  string
	args  int
	multi bool
}{
	{"write", 0, false}, {"net", 0, false}, {"account-homes", 0, false}, {"caps", 1, false}, {"syscalls", 1, false},
	{"no-write", 1, true}, {"no-read", 1, true}, {"public", 1, true}, {"device", 1, true}, {"writable", 1, true}, {"readable", 1, true},
	{"hide-dots", 1, true}, {"dot-ok", 1, true}, {"find-in", 1, true}, {"secret", 1, true}, {"links-in", 1, true},
	{"dir", 2, true}, {"file", 2, true},
	{"stamp", 3, true}, {"hot", 3, true},
}

// Encode is rs as the launcher reads it (DecodeRuleset).
func (rs Ruleset) Encode() []byte {
	var b strings.Builder
	b.WriteString(rulesetMagic + " " + strconv.Itoa(rulesetVersion))
	word := func(ws ...string) {
		for _, w := range ws {
			b.WriteByte(' ')
			b.WriteString(w)
		}
	}
	s := rs.Spec
	if s.Write {
		word("write")
	}
	if s.Net {
		word("net")
	}
	if s.AccountHomes {
		// The served worker recompiles a stale level from what it
		// decoded: without it, the other accounts' homes were dropped
		// from an SSH host's rules at the first recompile (session 16).
		word("account-homes")
	}
	if s.Caps != "" {
		word("caps", escapePath(s.Caps))
	}
	if s.Syscalls != "" {
		word("syscalls", escapePath(s.Syscalls))
	}
	for _, l := range s.lists() {
		for _, p := range l.paths {
			word(l.word, escapePath(p))
		}
	}
	for _, r := range rs.Rules {
		kind := "file"
		if r.Dir {
			kind = "dir"
		}
		word(kind, escapePath(r.Path), strconv.FormatUint(r.Rights, 10))
	}
	for _, st := range rs.Stamps {
		kind, names := "stamp", st.Names
		if st.Hot {
			kind = "hot"
		}
		if names == "" {
			names = "-"
		}
		word(kind, escapePath(st.Path), strconv.FormatInt(st.MTime, 10), names)
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// specList is one of a Spec's lists of paths, as encoded.
type specList struct {
	word   string
	paths  []string
	baseOK bool // a base-name pattern is allowed (Public)
}

func (s Spec) lists() []specList {
	return []specList{{"no-write", s.NoWrite, false}, {"no-read", s.NoRead, false}, {"public", s.Public, true},
		{"device", s.Devices, false}, {"writable", s.Writable, false}, {"readable", s.Readable, false},
		{"hide-dots", s.HideDots, false}, {"dot-ok", s.DotsOK, true}, {"find-in", s.FindIn, false}, {"secret", s.Secrets, true},
		{"links-in", s.LinksIn, false}}
}

// list is the Spec's list encoded as word.
func (s *Spec) list(word string) *[]string {
	switch word {
	case "no-write":
		return &s.NoWrite
	case "no-read":
		return &s.NoRead
	case "public":
		return &s.Public
	case "device":
		return &s.Devices
	case "writable":
		return &s.Writable
	case "readable":
		return &s.Readable
	case "hide-dots":
		return &s.HideDots
	case "dot-ok":
		return &s.DotsOK
	case "find-in":
		return &s.FindIn
	case "secret":
		return &s.Secrets
	case "links-in":
		return &s.LinksIn
	}
	return nil
}

// maxRuleset bounds an encoded Ruleset the launcher reads.
const maxRuleset = 8 << 20

// DecodeRuleset reads what Encode wrote (with or without its final line
// break); anything else is an error naming what is wrong (paths must be
// absolute and clean, rights Landlock's).
func DecodeRuleset(b []byte) (Ruleset, error) {
	if len(b) > maxRuleset {
		return Ruleset{}, errors.New("ruleset of " + strconv.Itoa(len(b)) + " bytes: more than " + strconv.Itoa(maxRuleset))
	}
	rs, err := decodeRuleset(strings.TrimSuffix(string(b), "\n"))
	if err != nil {
		return Ruleset{}, wrap("ruleset", err)
	}
	return rs, nil
}

func decodeRuleset(s string) (Ruleset, error) {
	w := strings.Split(s, " ")
	if len(w) < 2 || w[0] != rulesetMagic {
		return Ruleset{}, errors.New("not a ruleset (no " + rulesetMagic + " header)")
	}
	if w[1] != strconv.Itoa(rulesetVersion) {
		return Ruleset{}, errors.New("version " + strconv.Quote(w[1]) + ", want " + strconv.Itoa(rulesetVersion))
	}
	var rs Ruleset
	// Sized up front: a host's rules hold ~1,300 rules and ~450 stamps,
	// grown an append at a time otherwise. A word that is an item's
	// keyword is one (paths are absolute, numbers and digests not words).
	rules, stamps := 0, 0
	for _, x := range w[2:] {
		switch x {
		case "dir", "file":
			rules++
		case "stamp", "hot":
			stamps++
		}
	}
	rs.Rules, rs.Stamps = make([]Rule, 0, rules), make([]Stamp, 0, stamps)
	rank := -1
	for i := 2; i < len(w); {
		r := itemRank(w[i])
		switch {
		case r < 0:
			return Ruleset{}, errors.New("unknown item " + strconv.Quote(w[i]))
		case r < rank || r == rank && !rulesetItems[r].multi:
			return Ruleset{}, errors.New("item " + w[i] + " out of order")
		case i+rulesetItems[r].args >= len(w):
			return Ruleset{}, errors.New("item " + w[i] + " needs " + strconv.Itoa(rulesetItems[r].args) + " words")
		}
		rank = r
		item, args := w[i], w[i+1:i+1+rulesetItems[r].args]
		i += 1 + len(args)
		if err := rs.decodeItem(item, args); err != nil {
			return Ruleset{}, err
		}
	}
	if len(rs.Rules) == 0 {
		rs.Rules = nil
	}
	if len(rs.Stamps) == 0 {
		rs.Stamps = nil
	}
	return rs, nil
}

// itemRank is word's index in rulesetItems, -1 if none; dir and file
// share a rank, as do stamp and hot (they interleave).
func itemRank(word string) int {
	for i, it := range rulesetItems {
		if it.word == word {
			switch word {
			case "file", "hot":
				return i - 1
			}
			return i
		}
	}
	return -1
}

// decodeItem adds one item, its words checked.
func (rs *Ruleset) decodeItem(item string, args []string) error {
	// Every item's first word is a path (or a mode, escaped alike); the
	// others are numbers and digests, checked below as Encode writes
	// them, never escaped.
	var paths [1]string
	if len(args) > 0 {
		p, err := unescapePath(args[0])
		if err != nil {
			return errors.New(item + ": " + err.Error())
		}
		paths[0] = p
	}
	var num [24]byte // a number as Encode writes it, compared with the word
	switch item {
	case "write":
		rs.Spec.Write = true
	case "net":
		rs.Spec.Net = true
	case "account-homes":
		rs.Spec.AccountHomes = true
	case "caps":
		if c := paths[0]; c != CapsRead && c != CapsNoSystem {
			return errors.New("caps " + strconv.Quote(c))
		}
		rs.Spec.Caps = paths[0]
	case "syscalls":
		if m := paths[0]; m != SyscallsRead && m != SyscallsOwn {
			return errors.New("syscalls " + strconv.Quote(m))
		}
		rs.Spec.Syscalls = paths[0]
	case "dir", "file":
		if err := checkPath(paths[0], false); err != nil {
			return wrap("rule", err)
		}
		rights, err := strconv.ParseUint(args[1], 10, 64)
		if err != nil || string(strconv.AppendUint(num[:0], rights, 10)) != args[1] {
			return errors.New("rule on " + paths[0] + ": rights " + strconv.Quote(args[1]))
		}
		if rights == 0 || rights&^(readRights|writeRights) != 0 {
			return errors.New("rule on " + paths[0] + ": rights 0x" + strconv.FormatUint(rights, 16) + " are not Landlock's")
		}
		rs.Rules = append(rs.Rules, Rule{Path: paths[0], Rights: rights, Dir: item == "dir"})
	case "stamp", "hot":
		if err := checkPath(paths[0], false); err != nil {
			return wrap("stamp", err)
		}
		mt, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || string(strconv.AppendInt(num[:0], mt, 10)) != args[1] || mt < -1 {
			return errors.New("stamp " + paths[0] + ": time " + strconv.Quote(args[1]))
		}
		names := args[2]
		if names == "-" {
			names = ""
		} else if !isDigest(names) {
			return errors.New("stamp " + paths[0] + ": digest " + strconv.Quote(names))
		}
		rs.Stamps = append(rs.Stamps, Stamp{Path: paths[0], MTime: mt, Names: names, Hot: item == "hot"})
	default:
		l := rs.Spec.list(item)
		check := checkPath(paths[0], item == "public")
		if item == "dot-ok" || item == "secret" {
			check = checkName(paths[0])
		}
		if err := check; err != nil {
			return wrap("spec: "+item, err)
		}
		*l = append(*l, paths[0])
	}
	return nil
}

// isDigest reports whether s is a digest as entriesDigest writes it.
func isDigest(s string) bool {
	if len(s) != 2*digestBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// escapePath writes p as one word: bytes outside '!'..'~', and '%', as
// %XX.
func escapePath(p string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if c := p[i]; needsEscape(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func needsEscape(c byte) bool { return c <= ' ' || c > '~' || c == '%' }

// unescapePath is escapePath's inverse; it refuses an empty word, a byte
// escapePath escapes left as it is, and an escape escapePath would not
// write (lower-case, or of a byte it keeps).
func unescapePath(w string) (string, error) {
	if w == "" {
		return "", errors.New("empty word")
	}
	plain := true // nothing escaped: the word itself, no copy
	for i := 0; i < len(w) && plain; i++ {
		plain = !needsEscape(w[i])
	}
	if plain {
		return w, nil
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c != '%' {
			if needsEscape(c) {
				return "", errors.New("unescaped byte in " + strconv.Quote(w))
			}
			b.WriteByte(c)
			continue
		}
		hi, lo := -1, -1
		if i+2 < len(w) {
			hi, lo = unhex(w[i+1]), unhex(w[i+2])
		}
		if hi < 0 || lo < 0 || !needsEscape(byte(hi<<4|lo)) {
			return "", errors.New("bad escape in " + strconv.Quote(w))
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	return b.String(), nil
}

// unhex is an upper-case hexadecimal digit's value, -1 for anything else.
func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
