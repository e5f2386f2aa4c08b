package tools

import (
	"fmt"
	"strings"
)

// MaxDiffBytes bounds Output.Diff; a longer diff is cut with a marker.
const MaxDiffBytes = 64 << 10

// maxLCSCells bounds the table the line diff may use; a larger changed
// region is shown as all removed, then all added.
const maxLCSCells = 4 << 20

// UnifiedDiff returns a unified diff (3 lines of context) turning old into
// new, with "--- a/path" and "+++ b/path" headers, or "" when they are
// equal. It is bounded to MaxDiffBytes.
func UnifiedDiff(path, old, new string) string {
	if old == new {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	var sb strings.Builder
	oldName, newName := "a"+path, "b"+path
	if !strings.HasPrefix(path, "/") {
		oldName, newName = "a/"+path, "b/"+path
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i // extend over changes separated by at most 2*ctx equal lines
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*ctx {
				break
			}
		}
		end = min(end+ctx+1, len(ops))
		writeHunk(&sb, ops[start:end])
		i = end
		if sb.Len() > MaxDiffBytes {
			break
		}
	}
	out := sb.String()
	if len(out) > MaxDiffBytes {
		cut := strings.LastIndexByte(out[:MaxDiffBytes], '\n') + 1
		out = out[:cut] + fmt.Sprintf("... [diff truncated: %d bytes omitted]\n", len(out)-cut)
	}
	return out
}

type diffOp struct {
	kind       byte // ' ', '-', '+'
	text       string
	aLine, bLn int // 1-based line numbers before the op in a and b
}

func writeHunk(sb *strings.Builder, ops []diffOp) {
	var na, nb int
	for _, o := range ops {
		if o.kind != '+' {
			na++
		}
		if o.kind != '-' {
			nb++
		}
	}
	as, bs := ops[0].aLine, ops[0].bLn
	if na == 0 {
		as--
	}
	if nb == 0 {
		bs--
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(as, na), hunkRange(bs, nb))
	for _, o := range ops {
		sb.WriteByte(o.kind)
		sb.WriteString(o.text)
		if !strings.HasSuffix(o.text, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines is a line diff: common prefix and suffix, then a longest
// common subsequence of the middle when it is small enough.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	ai, bi := 0, 0
	emit := func(kind byte, text string) {
		ops = append(ops, diffOp{kind: kind, text: text, aLine: ai + 1, bLn: bi + 1})
		if kind != '+' {
			ai++
		}
		if kind != '-' {
			bi++
		}
	}
	for _, l := range a[:pre] {
		emit(' ', l)
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) <= maxLCSCells {
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				emit(' ', ma[i])
				i, j = i+1, j+1
			case j < len(mb) && (i == len(ma) || lcs[i][j+1] > lcs[i+1][j]):
				emit('+', mb[j])
				j++
			default:
				emit('-', ma[i])
				i++
			}
		}
	} else {
		for _, l := range ma {
			emit('-', l)
		}
		for _, l := range mb {
			emit('+', l)
		}
	}
	for _, l := range a[len(a)-suf:] {
		emit(' ', l)
	}
	return ops
}
