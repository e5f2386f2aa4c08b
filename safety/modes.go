package safety

import (
	"strconv"
	"strings"
)

// Modes that open files to other users (issue 26): a mode that lets
// every user write is High wherever it is set — undo restores the mode,
// but meanwhile another user of the host can replace what is there, and
// the kernel refuses it to a medium step (confine's chmodBits) — and a
// mode that lets the group or every user write, or a new owner, is High
// on a directory holding protected paths (~, ~/.., ~/.config, /home/bob:
// the protected files in it could be replaced, whatever their own mode).

// modeWrite is whom a mode lets write: the group, every other user.
type modeWrite struct{ group, other bool }

// any reports whether anyone besides the owner may write.
func (w modeWrite) any() bool { return w.group || w.other }

// grantsWrite says whom chmod's MODE (octal, or symbolic clauses
// [ugoa]*([-+=]([rwxXst]*|[ugo]))+, GNU's "=755" too) lets write. A
// clause without a who ("+w") obeys the umask: it counts for the group
// and others only in all, where a mode that may open a directory holding
// protected paths is judged (the umask is not known). Copying a class's
// bits ("o=u") may copy write. A mode that cannot be read may grant
// anything.
func grantsWrite(mode string, all bool) modeWrite {
	if mode == "" {
		return modeWrite{true, true}
	}
	if isOctal(mode) {
		return octalWrite(mode)
	}
	var w modeWrite
	for _, clause := range strings.Split(mode, ",") {
		rest := strings.TrimLeft(clause, "ugoa")
		classes := clause[:len(clause)-len(rest)]
		if classes == "" && all || strings.Contains(classes, "a") {
			classes = "go"
		}
		if rest == "" {
			return modeWrite{true, true} // not a mode chmod takes: may be anything
		}
		for ops := rest; ops != ""; {
			op := ops[0]
			if !strings.ContainsRune("+-=", rune(op)) {
				return modeWrite{true, true}
			}
			perms := ops[1:]
			if i := strings.IndexAny(perms, "+-="); i >= 0 {
				perms, ops = perms[:i], perms[i:]
			} else {
				ops = ""
			}
			if op == '-' {
				continue
			}
			if isOctal(perms) && perms != "" {
				ow := octalWrite(perms)
				w.group, w.other = w.group || ow.group, w.other || ow.other
				continue
			}
			if strings.Trim(perms, "rwxXst") != "" && strings.Trim(perms, "ugo") != "" || len(perms) > 1 && strings.Trim(perms, "ugo") == "" {
				return modeWrite{true, true}
			}
			if strings.ContainsAny(perms, "wugo") {
				w.group = w.group || strings.Contains(classes, "g")
				w.other = w.other || strings.Contains(classes, "o")
			}
		}
	}
	return w
}

func isOctal(s string) bool { return strings.Trim(s, "01234567") == "" }

// octalWrite is whom an octal mode lets write (its last two digits).
func octalWrite(m string) modeWrite {
	v, err := strconv.ParseUint(m, 8, 32)
	if err != nil {
		return modeWrite{true, true}
	}
	return modeWrite{group: v&0o020 != 0, other: v&0o002 != 0}
}

// modeOpens rates a mode (mode is the word as given, for reasons; val its
// value, static or not) that a command (who) sets on its operands: High
// when it lets every user write, and the operands' "opens" reason (role
// opens) when it may let anyone but the owner write.
func (c *classifier) modeOpens(who string, a arg) string {
	val := a.val
	if !a.static {
		val = ""
	}
	if grantsWrite(val, false).other {
		if a.static {
			c.add(High, "%s %s: lets every user of the host write (they could replace the files until undo restores the mode; the kernel refuses it to a medium step)", who, a.text)
		}
		return who + " " + a.text + " lets other users write it"
	}
	if grantsWrite(val, true).any() {
		return who + " " + a.text + " lets other users write it"
	}
	return ""
}
