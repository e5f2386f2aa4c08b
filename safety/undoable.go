package safety

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// opaqueWriters are programs whose file changes AnalyzeCommand cannot list
// (archives and compressors write and delete files named inside them or
// derived from their operands, patch writes the files its diff names,
// setfacl changes access lists, which the undo journal does not keep), so
// an undo journal cannot save what they change before they run. chown and
// chgrp are not here: the journal keeps owners.
var opaqueWriters = map[string]string{
	"tar": "an archive tool", "zip": "an archive tool", "unzip": "an archive tool", "cpio": "an archive tool",
	"gzip": "a compressor", "gunzip": "a compressor", "bzip2": "a compressor", "bunzip2": "a compressor",
	"xz": "a compressor", "unxz": "a compressor", "zstd": "a compressor", "unzstd": "a compressor",
	"lz4": "a compressor", "compress": "a compressor", "uncompress": "a compressor",
	"patch": "writes the files its diff names", "split": "writes files it names itself",
	"csplit": "writes files it names itself", "mktemp": "creates a file it names itself",
	"setfacl": "changes access lists",
	"rsync":   "writes a tree", "git": "changes a working tree", "make": "runs a build",
}

// UndoOpaque reports whether cmd runs a program whose file changes an undo
// journal cannot know before it runs (see opaqueWriters), and says which.
// It looks at every simple command of the line, inside pipelines, lists,
// subshells and substitutions, by the base name of its program after the
// policy's wrappers (Policy.Wrappers) and their options; a program named by
// an expansion is not looked at (the classifier rates it high).
func (p Policy) UndoOpaque(cmd string) (bool, string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return true, "the command does not parse"
	}
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || why != "" || len(call.Args) == 0 {
			return why == ""
		}
		for _, w := range call.Args { // the program, after wrappers and their options
			lit := w.Lit()
			if lit == "" {
				return true
			}
			name := path.Base(lit)
			if _, wrapper := p.Wrappers[name]; wrapper || strings.HasPrefix(lit, "-") || strings.Contains(lit, "=") || durationLike(lit) {
				continue
			}
			if what, ok := opaqueWriters[name]; ok {
				why = name + ": " + what
			}
			if name == "rmdir" && rmdirParents(call.Args) {
				why = "rmdir -p: removes the directories above the ones it names"
			}
			break
		}
		return why == ""
	})
	return why != "", why
}

// durationLike is a wrapper's number argument (timeout 5s, nice -n 10).
func durationLike(s string) bool {
	s = strings.TrimRight(s, "smhd")
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// rmdirParents reports whether an rmdir command line has -p (--parents,
// or p in a short-option cluster); an option that is not a literal word
// counts as one.
func rmdirParents(args []*syntax.Word) bool {
	for _, w := range args[1:] {
		lit := w.Lit()
		switch {
		case lit == "--":
			return false
		case lit == "" || strings.HasPrefix("--parents", lit) && len(lit) > 2:
			return true
		case len(lit) > 1 && lit[0] == '-' && lit[1] != '-' && strings.ContainsRune(lit, 'p'):
			return true
		}
	}
	return false
}
