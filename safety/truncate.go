package safety

import (
	"strconv"
	"strings"
)

// UndoFileCap is the largest file the undo journal saves and compares
// (journal.DefaultMaxBytes; executor's TestUndoFileCapIsTheJournals
// keeps them equal). A command that makes a file larger leaves a state
// undo cannot tell from a later change.
const UndoFileCap = 10 << 20

// truncate reads truncate's size: a size that makes the files larger
// than UndoFileCap, or that is not known before it runs (relative to the
// file's size, in I/O blocks, from a reference file, computed), is high
// before the command runs — undo could not take it back.
func (c *classifier) truncate(s scanned, args []arg, r *role) {
	for _, i := range s.opts {
		for _, opt := range []string{"-r", "--reference"} {
			if v, j, ok := s.value(args, i, opt); ok {
				r.values = append(r.values, j)
				c.read("truncate", v)
				c.add(High, "truncate %s %s: sets a size known only when it runs, which undo may not be able to take back", opt, v.text)
			}
		}
		for _, opt := range []string{"-o", "--io-blocks"} {
			for _, f := range s.forms(args, i) {
				if f == opt {
					c.add(High, "truncate %s: a size in I/O blocks, known only when it runs, which undo may not be able to take back", opt)
				}
			}
		}
		for _, opt := range []string{"-s", "--size"} {
			v, j, ok := s.value(args, i, opt)
			if !ok {
				continue
			}
			r.values = append(r.values, j)
			n, relative, known := truncateSize(v.val)
			switch {
			case !v.static || !known:
				c.add(High, "truncate %s %s: a size not known before it runs, which undo may not be able to take back", opt, v.text)
			case relative:
				c.add(High, "truncate %s %s: a size relative to the file's, which undo may not be able to take back", opt, v.text)
			case n > UndoFileCap:
				c.add(High, "truncate %s %s: makes the file larger than undo saves and compares (%d MiB): undo could not take it back", opt, v.text, UndoFileCap>>20)
			}
		}
	}
}

// truncateSize parses GNU truncate's SIZE: an optional modifier (+ - < >
// / %: relative to the file's size), digits, and a unit (K M G T P E Z Y
// powers of 1024, KB MB … of 1000, KiB MiB … of 1024). known is false for
// anything else or an overflow.
func truncateSize(s string) (n int64, relative, known bool) {
	if s == "" {
		return 0, false, false
	}
	if strings.ContainsRune("+-<>/%", rune(s[0])) {
		relative, s = true, s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, relative, false
	}
	v, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, relative, false
	}
	unit := s[i:]
	mult := int64(1)
	if unit != "" {
		k := strings.IndexByte("KMGTPEZY", unit[0]&^0x20)
		if k < 0 {
			return 0, relative, false
		}
		base := int64(1024)
		switch unit[1:] {
		case "", "iB":
		case "B":
			base = 1000
		default:
			return 0, relative, false
		}
		for ; k >= 0; k-- {
			if mult > (1<<62)/base {
				return 0, relative, false
			}
			mult *= base
		}
	}
	if v > (1<<62)/mult {
		return 0, relative, false
	}
	return v * mult, relative, true
}
