package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// WriteFileName is the name of the file writing tool.
const WriteFileName = "write_file"

// WriteFileParams are write_file's parameters.
type WriteFileParams struct {
	FilePath string `json:"file_path" description:"File path; its directory must exist."`
	Content  string `json:"content" description:"Text."`
	Mode     string `json:"mode,omitempty" enum:"w,a" description:"w overwrite (default), a append."`
}

// WriteFile writes a text file on the target, atomically.
type WriteFile struct {
	base[WriteFileParams]
	c *config
}

// NewWriteFile returns write_file under policy's path rules and
// MaxWriteBytes. A new file gets mode 0644; an existing one keeps its mode.
func NewWriteFile(policy safety.Policy, opts ...Option) *WriteFile {
	return newWriteFile(newConfig(policy, opts))
}

func newWriteFile(c *config) *WriteFile {
	return &WriteFile{c: c, base: newBase[WriteFileParams](WriteFileName,
		"Write a text file on the target (atomically).")}
}

// Run writes the file.
func (t *WriteFile) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	return t.do(ctx, tr, raw, true)
}

// Preview computes the new content and its diff without writing.
func (t *WriteFile) Preview(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	return t.do(ctx, tr, raw, false)
}

func (t *WriteFile) do(ctx context.Context, tr transport.Transport, raw json.RawMessage, write bool) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.doTyped(ctx, tr, p, write)
}

func (t *WriteFile) run(ctx context.Context, tr transport.Transport, p WriteFileParams) (Output, error) {
	return t.doTyped(ctx, tr, p, true)
}

func (t *WriteFile) preview(ctx context.Context, tr transport.Transport, p WriteFileParams) (Output, error) {
	return t.doTyped(ctx, tr, p, false)
}

func (t *WriteFile) doTyped(ctx context.Context, tr transport.Transport, p WriteFileParams, write bool) (Output, error) {
	out, err := t.write(ctx, tr, p, write)
	return finish(t.name, out, err)
}

// Touches reports the file write_file changes.
func (t *WriteFile) Touches(raw json.RawMessage) (Effects, error) {
	p, err := t.params(raw)
	if err != nil {
		return Effects{}, err
	}
	return t.touches(p), nil
}

func (t *WriteFile) touches(p WriteFileParams) Effects {
	return Effects{Files: []Access{{Op: safety.FileWrite, Path: p.FilePath}}}
}

func (t *WriteFile) write(ctx context.Context, tr transport.Transport, p WriteFileParams, write bool) (Output, error) {
	path, err := t.c.resolve(ctx, tr, safety.FileWrite, p.FilePath)
	if err != nil {
		return Output{}, err
	}
	if err := t.c.policy.CheckSize(safety.FileWrite, int64(len(p.Content))); err != nil {
		return Output{}, fail("%s: %v", path, err)
	}
	// The old content feeds the append, the diff and the undo journal.
	cur, err := t.c.readCurrent(ctx, tr, safety.FileWrite, path, true)
	if err != nil {
		return Output{}, err
	}
	if write {
		if err := checkExpected(ctx, path, contentSHA(cur)); err != nil {
			return Output{}, err
		}
	}
	if err := t.c.policy.CheckContent(safety.FileWrite, cur.data); err != nil {
		return Output{}, fail("%s: %v", path, err)
	}
	data := []byte(p.Content)
	verb := "wrote"
	if p.Mode == "a" {
		data = append(append([]byte(nil), cur.data...), p.Content...)
		verb = "appended"
		if err := t.c.policy.CheckSize(safety.FileWrite, int64(len(data))); err != nil {
			return Output{}, fail("%s: %v", path, err)
		}
	}
	fc := change(path, cur, data)
	if write {
		if err := t.c.commit(ctx, tr, fc, cur, data); err != nil {
			return Output{}, err
		}
	} else {
		verb = "would have " + map[string]string{"wrote": "written", "appended": "appended"}[verb]
	}
	out := TextOutput(fmt.Sprintf("%s %d bytes to %s\n", verb, len(p.Content), path))
	out.FilesChanged = []FileChange{fc}
	out.Diff = UnifiedDiff(path, string(cur.data), string(data))
	return out, nil
}
