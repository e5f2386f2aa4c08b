package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// EditFileName is the name of the search-and-replace tool.
const EditFileName = "edit_file"

// EditFileParams are edit_file's parameters.
type EditFileParams struct {
	FilePath      string `json:"file_path" description:"File path; ~ is home."`
	SearchPattern string `json:"search_pattern" description:"Exact text to find, or an RE2 regexp with regex."`
	Replacement   string `json:"replacement" description:"New text; with regex, $1 is a group."`
	Regex         bool   `json:"regex,omitempty" description:"search_pattern is a regexp."`
	Count         int    `json:"count,omitempty" description:"Matches to replace, -1 all. Default: it must match once."`
}

func (p *EditFileParams) check() error {
	if p.SearchPattern == "" {
		return errors.New("search_pattern is empty")
	}
	if p.Count < -1 {
		return errors.New("count must be positive, or -1 for all matches")
	}
	return nil
}

// EditFile replaces text in a file on the target, atomically.
type EditFile struct {
	base[EditFileParams]
	c *config
}

// NewEditFile returns edit_file under policy's path rules, size caps and
// binary refusal.
func NewEditFile(policy safety.Policy, opts ...Option) *EditFile {
	return newEditFile(newConfig(policy, opts))
}

func newEditFile(c *config) *EditFile {
	return &EditFile{c: c, base: newBase[EditFileParams](EditFileName,
		"Search and replace in a text file on the target.")}
}

// Run edits the file.
func (t *EditFile) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	return t.do(ctx, tr, raw, true)
}

// Preview computes the edit and its diff without writing.
func (t *EditFile) Preview(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	return t.do(ctx, tr, raw, false)
}

func (t *EditFile) do(ctx context.Context, tr transport.Transport, raw json.RawMessage, write bool) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.doTyped(ctx, tr, p, write)
}

func (t *EditFile) run(ctx context.Context, tr transport.Transport, p EditFileParams) (Output, error) {
	return t.doTyped(ctx, tr, p, true)
}

func (t *EditFile) preview(ctx context.Context, tr transport.Transport, p EditFileParams) (Output, error) {
	return t.doTyped(ctx, tr, p, false)
}

func (t *EditFile) doTyped(ctx context.Context, tr transport.Transport, p EditFileParams, write bool) (Output, error) {
	out, err := t.edit(ctx, tr, p, write)
	return finish(t.name, out, err)
}

// Touches reports the file edit_file changes.
func (t *EditFile) Touches(raw json.RawMessage) (Effects, error) {
	p, err := t.params(raw)
	if err != nil {
		return Effects{}, err
	}
	return t.touches(p), nil
}

func (t *EditFile) touches(p EditFileParams) Effects {
	return Effects{Files: []Access{{Op: safety.FileEdit, Path: p.FilePath}}}
}

func (t *EditFile) edit(ctx context.Context, tr transport.Transport, p EditFileParams, write bool) (Output, error) {
	path, err := t.c.resolve(ctx, tr, safety.FileEdit, p.FilePath)
	if err != nil {
		return Output{}, err
	}
	cur, err := t.c.readCurrent(ctx, tr, safety.FileEdit, path, false)
	if err != nil {
		return Output{}, err
	}
	if write {
		if err := checkExpected(ctx, path, contentSHA(cur)); err != nil {
			return Output{}, err
		}
	}
	if err := t.c.policy.CheckContent(safety.FileEdit, cur.data); err != nil {
		return Output{}, fail("%s: %v", path, err)
	}
	updated, n, err := EditLimit(string(cur.data), p.SearchPattern, p.Replacement, p.Regex, p.Count, t.c.policy.MaxWriteBytes)
	if err != nil {
		return Output{}, fail("%s: %v", path, err)
	}
	if err := t.c.policy.CheckSize(safety.FileEdit, int64(len(updated))); err != nil {
		return Output{}, fail("%s: %v", path, err)
	}
	data := []byte(updated)
	fc := change(path, cur, data)
	verb := "would make"
	if write {
		if err := t.c.commit(ctx, tr, fc, cur, data); err != nil {
			return Output{}, err
		}
		verb = "made"
	}
	out := TextOutput(fmt.Sprintf("edited %s: %s %d %s\n", path, verb, n, plural(n, "replacement")))
	out.FilesChanged = []FileChange{fc}
	out.Diff = UnifiedDiff(path, string(cur.data), updated)
	return out, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
