package safety

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Command is a command line parsed once for every analysis of one step:
// Analyze, then AnalyzeResolved once the host's links are known, each
// with the passes they make (the bash reading and, for syntax only bash
// reads, the POSIX one that /bin/sh may be; the view with undo). Each
// dialect's syntax tree of the line, and of each code string it runs
// (sh -c '…'), is parsed the first time a pass needs it and reused by
// the rest. A Command is not safe for concurrent use.
type Command struct {
	text  string
	trees map[treeKey]parsedTree
	// parses counts the parser's runs, for the tests that hold "parsed
	// once".
	parses int
}

// treeKey names one parse: the dialect, the code, and which occurrence
// of that code within one pass it is. A pass marks the statements it has
// seen by their nodes, so the same code string twice in one command
// (sh -c 'x'; while …; do sh -c 'x'; done) must be two trees, each
// classified where it is.
type treeKey struct {
	lang syntax.LangVariant
	src  string
	nth  int
}

type parsedTree struct {
	f   *syntax.File
	err error
}

// ParseCommand returns text as a Command; it is parsed as a pass needs
// it, each dialect once.
func ParseCommand(text string) *Command {
	return &Command{text: text, trees: map[treeKey]parsedTree{}}
}

// String is the command line.
func (c *Command) String() string { return c.text }

// tree is src parsed as lang: the nth time a pass asks for it, the same
// tree every pass gets.
func (c *Command) tree(lang syntax.LangVariant, src string, nth int) (*syntax.File, error) {
	k := treeKey{lang, src, nth}
	if t, ok := c.trees[k]; ok {
		return t.f, t.err
	}
	c.parses++
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
	c.trees[k] = parsedTree{f, err}
	return f, err
}
