package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/transport"
)

// beforeRun is a journaled target's state just before the command ran,
// as the journal saved it: a file's state (journal.State's terms), or a
// directory tree's entries.
type beforeRun struct {
	sum  string
	tree map[string]byte // an entry's path in the tree → its type
}

// contentState is a file's state in journal.State's terms.
func contentState(content []byte, existed bool) string {
	if !existed {
		return journal.Absent
	}
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

func treeNames(l journal.TreeListing) map[string]byte {
	m := make(map[string]byte, len(l.Entries))
	for _, e := range l.Entries {
		m[e.Path] = e.Type
	}
	return m
}

// maxPartialNames bounds the names one note lists.
const maxPartialNames = 8

// partialNote says what a command that failed changed before it failed,
// from the journal's states before and after (after: shellChanged's),
// listing a tree again: "" when nothing changed. Undo restores each.
func (e *Executor) partialNote(ctx context.Context, tr transport.Transport, before map[string]beforeRun, after map[string]string) string {
	var parts []string
	unsure := false
	paths := make([]string, 0, len(before))
	for p := range before {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b := before[p]
		if b.tree != nil {
			d, known := treeChange(ctx, tr, p, b.tree)
			if d != "" {
				parts = append(parts, d)
			}
			unsure = unsure || !known
			continue
		}
		a, ok := after[p]
		if !ok || a == b.sum || a == journal.TooLarge && b.sum == journal.TooLarge {
			continue
		}
		switch {
		case b.sum == journal.Absent:
			parts = append(parts, "created "+p)
		case a == journal.Absent:
			parts = append(parts, "removed "+p)
		default:
			parts = append(parts, "changed "+p)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	end := " — agent undo puts back what it changed]"
	if unsure {
		end = " — agent undo may not be able to tell what it changed]"
	}
	return "[before it failed, the command " + strings.Join(parts, "; ") + end
}

// treeChange says how the tree at root differs from the entries it held;
// known is false when the tree cannot be listed now.
func treeChange(ctx context.Context, tr transport.Transport, root string, was map[string]byte) (desc string, known bool) {
	now := map[string]byte{}
	l, err := ListTree(ctx, tr, root)
	switch {
	case err == nil:
		now = treeNames(l)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("may have changed %s, which cannot be listed now (%v)", root, err), false
	}
	var gone, added []string
	for p := range was {
		if _, ok := now[p]; !ok && p != "." {
			gone = append(gone, p)
		}
	}
	for p := range now {
		if _, ok := was[p]; !ok {
			added = append(added, p)
		}
	}
	var out []string
	if _, ok := now["."]; !ok {
		out = append(out, fmt.Sprintf("removed %s and the %d entries in it", root, len(was)-1))
	} else if len(gone) > 0 {
		out = append(out, fmt.Sprintf("removed %d of the %d entries in %s (%s)", len(gone), len(was)-1, root, names(gone)))
	}
	if len(added) > 0 {
		out = append(out, fmt.Sprintf("added %d entries in %s (%s)", len(added), root, names(added)))
	}
	return strings.Join(out, "; "), true
}

// names lists up to maxPartialNames paths, sorted, and how many more.
func names(ps []string) string {
	sort.Strings(ps)
	if len(ps) <= maxPartialNames {
		return strings.Join(ps, ", ")
	}
	return strings.Join(ps[:maxPartialNames], ", ") + fmt.Sprintf(", … %d more", len(ps)-maxPartialNames)
}

// bytesChanged is what a command wrote to its journaled files: the new
// size of each file whose state differs from the one saved before it
// ran (a removed one counts 0). nil when nothing was journaled as a
// file. A directory tree's changes are not counted.
func bytesChanged(before map[string]beforeRun, after map[string]string, sizes map[string]int64) *int64 {
	var n int64
	files := 0
	for p, b := range before {
		if b.tree != nil {
			continue
		}
		a, ok := after[p]
		if !ok {
			continue
		}
		files++
		if n2, ok := journal.LargeSize(a); ok && a != b.sum {
			n += n2 // over the bound: only its first bytes were read
		} else if a != b.sum && a != journal.Absent && a != journal.TooLarge && !strings.HasPrefix(a, journal.TreeStatePrefix) {
			n += sizes[p]
		}
	}
	if files == 0 {
		return nil
	}
	return &n
}
