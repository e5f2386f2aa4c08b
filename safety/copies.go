package safety

import (
	"path"
	"strings"
)

// Copies into a directory: cp, mv and install write DIR/NAME for each
// source (see copyTargets); backupSuffix asks copyInto too.

// copyInto reads cp/mv/install's operands: the files copied and where
// to; into is set when they go into the directory dest under their own
// names (-t DIR; more than one source; a destination written as a
// directory: "DIR/", "~", ".", "..").
//
// Without into, dest and srcs are still the last operand and the others
// (two operands: SRC DEST).
func copyInto(s scanned, args []arg) (dest arg, srcs []arg, into bool) {
	for _, i := range s.opts {
		for _, opt := range []string{"-t", "--target-directory"} {
			if v, _, ok := s.value(args, i, opt); ok {
				dest, into = v, true
			}
		}
	}
	var ops []arg
	for _, i := range s.operands {
		ops = append(ops, args[i])
	}
	if into {
		return dest, ops, true
	}
	if len(ops) < 2 {
		return arg{}, nil, false
	}
	dest, srcs = ops[len(ops)-1], ops[:len(ops)-1]
	v := dest.val
	into = len(srcs) > 1 || dest.static && (strings.HasSuffix(v, "/") || v == "~" || v == "." || v == "..")
	return dest, srcs, into
}

// copyTargets adds, for cp/mv/install into a directory, each file the
// command writes there: DIR/NAME for each source's base name. A copy of
// ~/x.txt into ~/ is then a write of ~/.bashrc when x.txt is .bashrc.
func (c *classifier) copyTargets(name string, s scanned, args []arg) {
	dest, srcs, into := copyInto(s, args)
	if !dest.static {
		return
	}
	how := wContent
	if !into {
		// "cp SRC DEST": DEST may be a directory on the host (known only
		// there), and then DEST/NAME is written. Rated, not journaled:
		// cp /tmp/.bashrc /home/u is high, as it would be written to ~/.
		how = wRateOnly | wQuiet
	}
	if c.recursiveWrite(name, s, args) {
		how |= wTree
	}
	for _, src := range srcs {
		if !src.static {
			continue // reported as not statically resolvable with the operands
		}
		base := path.Base(strings.TrimRight(src.val, "/"))
		if base == "/" || base == "." || base == ".." {
			continue
		}
		t := arg{val: strings.TrimRight(dest.val, "/") + "/" + base, text: dest.text + " (" + base + ")", static: true, tilde: dest.tilde}
		c.write(name, t, how)
	}
}
