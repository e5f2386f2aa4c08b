package safety

import (
	"path"
	"strings"
)

// Backups: cp, mv, install and ln with -b, --backup[=CONTROL] or -S
// SUFFIX keep the destination they replace as DEST~ (or DEST+SUFFIX);
// sed -i SUFFIX keeps each file it edits as FILE+SUFFIX. The backup is a
// file the command creates: it is a write target (journaled as absent,
// removed by undo). A backup name known only when the command runs
// (numbered backups, a name in another directory) is high: undo could
// not remove it.

// backupSuffix reads cp/mv/install/ln's backup options and returns the
// suffix of the backup the destination gets ("" for none).
func (c *classifier) backupSuffix(name string, s scanned, args []arg) string {
	on, control, suffix := false, "", "~"
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			switch {
			case f == "-b" || f == "--backup" || inCluster(f, 'b', "St"):
				on, control = true, ""
			case strings.HasPrefix(f, "--backup="):
				on, control = true, strings.TrimPrefix(f, "--backup=")
			}
		}
		for _, opt := range []string{"-S", "--suffix"} {
			if v, _, ok := s.value(args, i, opt); ok {
				on = true // -S implies --backup (coreutils)
				if !v.static {
					c.opaque("%s %s %s: a backup suffix not known before it runs", name, opt, v.text)
					return ""
				}
				suffix = v.val
			}
		}
	}
	if !on {
		return ""
	}
	switch control {
	case "none", "off":
		return ""
	case "", "existing", "nil", "simple", "never":
	case "numbered", "t":
		c.add(High, "%s --backup=%s: numbered backup names are known only when it runs, so undo could not remove them", name, control)
		return ""
	default:
		c.add(High, "%s --backup=%s: an unknown backup control", name, control)
		return ""
	}
	if suffix == "" || strings.Contains(suffix, "/") {
		c.add(High, "%s: backup suffix %q names no file beside the destination, so undo could not remove it", name, suffix)
		return ""
	}
	if _, _, into := copyInto(s, args); into {
		c.add(High, "%s: backups in a target directory are named when it runs, so undo could not remove them", name)
		return ""
	}
	return suffix
}

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

// inCluster reports whether the short-option word f ("-sfb") holds the
// flag ch before any option in takesValue, whose value is the word's rest.
func inCluster(f string, ch byte, takesValue string) bool {
	if len(f) < 3 || f[0] != '-' || f[1] == '-' {
		return false
	}
	for i := 1; i < len(f); i++ {
		switch {
		case f[i] == ch:
			return true
		case strings.IndexByte(takesValue, f[i]) >= 0:
			return false
		}
	}
	return false
}

// sedBackupSuffix is the suffix of sed -i's backups ("" for none): the
// rest of an -i cluster word, or --in-place=SUFFIX.
func (c *classifier) sedBackupSuffix(s scanned, args []arg) string {
	suffix := ""
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			switch {
			case strings.HasPrefix(f, "--in-place="):
				suffix = strings.TrimPrefix(f, "--in-place=")
			case f == "--in-place":
				suffix = ""
			case sedInPlace(f):
				suffix = f[strings.IndexByte(f[1:], 'i')+2:]
			}
		}
	}
	if strings.ContainsAny(suffix, "/*") {
		c.add(High, "sed -i %s: a backup named from the file's path (or in another directory) is not journaled, so undo could not remove it", suffix)
		return ""
	}
	return suffix
}

// backupName is the backup of file with suffix.
func backupName(file, suffix string) string { return file + suffix }
