package safety

import (
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
			case abbreviates(f, "--backup"):
				// getopt_long takes any unambiguous prefix: --back=t
				// is --backup=t (no other long option of cp, mv,
				// install or ln starts with --b).
				_, control, _ = strings.Cut(f, "=")
				on = true
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

// abbreviates reports whether the option word f ("--back=t") is a
// shortened long option opt, with or without a value.
func abbreviates(f, opt string) bool {
	name, _, _ := strings.Cut(f, "=")
	return len(name) > 2 && len(name) < len(opt) && strings.HasPrefix(opt, name)
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
