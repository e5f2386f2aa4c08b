package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/transport"
)

// SessionFilesName is the name of the tool that resolves references to
// the session's files.
const SessionFilesName = "session_files"

// SessionFilesParams are session_files' parameters.
type SessionFilesParams struct {
	Action    string `json:"action,omitempty" description:"list (default), get (paths only), or search (with query)." enum:"list,get,search"`
	Reference string `json:"reference,omitempty" description:"this (the newest), these (the latest task's, or the newest count), previous (from before), all (default; get: this)." enum:"this,these,previous,all"`
	FileType  string `json:"file_type,omitempty" description:"log, config, script, archive, text, data, or an extension (yaml)."`
	Count     int    `json:"count,omitempty" description:"How many."`
	Query     string `json:"query,omitempty" description:"search: part of the path, or a name pattern (*.log)."`
}

func (p *SessionFilesParams) check() error {
	switch p.Action {
	case "":
		p.Action = "list"
	case "list", "get", "search":
	default:
		return fmt.Errorf("action %q is not one of list, get, search", p.Action)
	}
	if p.Action == "search" && strings.TrimSpace(p.Query) == "" {
		return errors.New("search needs a query: part of the path or a name pattern")
	}
	if p.Action != "search" && p.Query != "" {
		return fmt.Errorf("query is for action search, not %s", p.Action)
	}
	if p.Reference == "" {
		p.Reference = execctx.RefAll
		if p.Action == "get" {
			p.Reference = execctx.RefThis
		}
	}
	return p.query().Check()
}

func (p *SessionFilesParams) query() execctx.FileQuery {
	return execctx.FileQuery{Reference: p.Reference, FileType: p.FileType, Name: p.Query, Count: p.Count}
}

// SessionFilesFunc answers a query from the session's file index
// (execctx.Context.FindFiles).
type SessionFilesFunc func(execctx.FileQuery) ([]execctx.SessionFile, error)

// SessionFiles answers from the execution context's index of the files the
// session uploaded, downloaded, read, wrote or edited: what "this config",
// "the two logs I uploaded" or "the file from before" name. It does no I/O.
type SessionFiles struct {
	base[SessionFilesParams]
	c *config
}

func newSessionFiles(c *config) *SessionFiles {
	return &SessionFiles{c: c, base: newBase[SessionFilesParams](SessionFilesName,
		"Resolve the session's files (uploaded, downloaded, read, written, edited) by reference: this, these, previous, all; by type or name.")}
}

// Run answers.
func (t *SessionFiles) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.run(ctx, tr, p)
}

// Touches: session_files touches nothing.
func (t *SessionFiles) Touches(raw json.RawMessage) (Effects, error) {
	if _, err := t.params(raw); err != nil {
		return Effects{}, err
	}
	return Effects{}, nil
}

func (t *SessionFiles) touches(SessionFilesParams) Effects { return Effects{} }

func (t *SessionFiles) run(_ context.Context, _ transport.Transport, p SessionFilesParams) (Output, error) {
	if t.c.sessionFiles == nil {
		return ErrorOutput("%s: this run keeps no index of its files", t.name), nil
	}
	files, err := t.c.sessionFiles(p.query())
	if err != nil {
		return ErrorOutput("%s: %v", t.name, err), nil
	}
	what := p.Reference
	if p.FileType != "" {
		what += ", file_type " + p.FileType
	}
	if p.Query != "" {
		what += ", query " + p.Query
	}
	if len(files) == 0 {
		msg := fmt.Sprintf("no file of this session matches (%s)", what)
		if p.Action == "get" {
			return ErrorOutput("%s: %s; list them with action list", t.name, msg), nil
		}
		return TextOutput("No file of this session matches (" + what + ").\n"), nil
	}
	var b strings.Builder
	if p.Action == "get" {
		for i, f := range files {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(f.Path)
		}
		return TextOutput(b.String()), nil
	}
	fmt.Fprintf(&b, "%d files of this session (%s), newest first:\n", len(files), what)
	for i, f := range files {
		fmt.Fprintf(&b, "%d. %s\n", i+1, execctx.DescribeFile(f))
	}
	return TextOutput(b.String()), nil
}
