package safety

import "strings"

// opaqueWriters are programs whose file changes the classifier cannot
// list (archives and compressors write and delete files named inside them
// or derived from their operands, patch writes the files its diff names,
// setfacl changes access lists, which the undo journal does not keep), so
// an undo journal cannot save what they change before they run. chown and
// chgrp are not here: the journal keeps owners. The classifier notes each
// one it meets, wherever it runs (Analysis.Unjournaled).
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

// opaqueWrite says why an undo journal cannot know what the command name
// (its arguments args) changes, "name: what", or "" when it can.
func opaqueWrite(name string, args []arg) string {
	if what, ok := opaqueWriters[name]; ok {
		return name + ": " + what
	}
	if name == "rmdir" && rmdirParents(args) {
		return "rmdir -p: removes the directories above the ones it names"
	}
	return ""
}

// rmdirParents reports whether rmdir's arguments have -p (--parents, or p
// in a short-option cluster); a word that is not static counts as one.
func rmdirParents(args []arg) bool {
	for _, a := range args {
		lit := a.val
		switch {
		case !a.static:
			return true
		case lit == "--":
			return false
		case strings.HasPrefix("--parents", lit) && len(lit) > 2:
			return true
		case len(lit) > 1 && lit[0] == '-' && lit[1] != '-' && strings.ContainsRune(lit, 'p'):
			return true
		}
	}
	return false
}
