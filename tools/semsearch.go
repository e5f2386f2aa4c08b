package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/semsearch"
	"github.com/autoshell/agent/transport"
)

// SemanticSearchName is the name of the passage search tool.
const SemanticSearchName = "semantic_search"

// Bounds of semantic_search's parameters.
const (
	MaxSearchTopK     = 50
	MaxSearchQueryLen = 2000
)

// NoEmbedderReason is what semantic_search says when it was given no
// embeddings model and no reason.
const NoEmbedderReason = "no embeddings model is configured (llm.embedding_model)"

// SemanticSearchParams are semantic_search's parameters.
type SemanticSearchParams struct {
	Query string `json:"query" description:"What to look for, in words."`
	Path  string `json:"path" description:"Directory on the target to search; ~ is home."`
	TopK  int    `json:"top_k,omitempty" description:"Passages to return; default 5, at most 50."`
	Glob  string `json:"glob,omitempty" description:"Only these files: a name pattern (*.conf), or with '/' a pattern of the path below path."`
}

func (p *SemanticSearchParams) check() error {
	switch {
	case strings.TrimSpace(p.Query) == "":
		return errors.New("query is empty: say what to look for")
	case len(p.Query) > MaxSearchQueryLen:
		return fmt.Errorf("query is %d bytes, more than %d", len(p.Query), MaxSearchQueryLen)
	case p.Path == "":
		return errors.New("path is empty: give the directory to search")
	case p.TopK < 0 || p.TopK > MaxSearchTopK:
		return fmt.Errorf("top_k %d is not between 1 and %d", p.TopK, MaxSearchTopK)
	}
	if err := semsearch.ValidGlob(p.Glob); err != nil {
		return err
	}
	return nil
}

// SemanticSearch finds the passages of a directory's text files that best
// match a query (see package semsearch): by embeddings when it has an
// embeddings model, else by BM25. Files the policy rates sensitive to read
// are skipped; passages are scrubbed of secrets before they are embedded.
type SemanticSearch struct {
	base[SemanticSearchParams]
	c *config
}

func newSemanticSearch(c *config) *SemanticSearch {
	return &SemanticSearch{c: c, base: newBase[SemanticSearchParams](SemanticSearchName,
		"Search a directory's text files for passages about the query (meaning, not exact words); answers FILE:START-END, score and snippet.")}
}

// Run searches.
func (t *SemanticSearch) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.run(ctx, tr, p)
}

// Touches reports the directory semantic_search reads.
func (t *SemanticSearch) Touches(raw json.RawMessage) (Effects, error) {
	p, err := t.params(raw)
	if err != nil {
		return Effects{}, err
	}
	return t.touches(p), nil
}

func (t *SemanticSearch) touches(p SemanticSearchParams) Effects {
	return Effects{Files: []Access{{Op: safety.FileRead, Path: p.Path}}}
}

func (t *SemanticSearch) run(ctx context.Context, tr transport.Transport, p SemanticSearchParams) (Output, error) {
	res, err := t.search(ctx, tr, p)
	if err != nil {
		return finish(t.name, Output{}, err)
	}
	return TextOutput(res.Text()), nil
}

func (t *SemanticSearch) search(ctx context.Context, tr transport.Transport, p SemanticSearchParams) (*semsearch.Result, error) {
	home, err := t.c.home(ctx, tr)
	if err != nil {
		return nil, err
	}
	root, a, err := t.c.policy.CheckPath(safety.FileRead, p.Path, home)
	if err != nil {
		return nil, fail("%v", err)
	}
	if a.Level > safety.Safe {
		return nil, fail("%s: %s; semantic_search does not read what the policy protects", root, a)
	}
	fi, err := tr.Stat(ctx, root)
	if err != nil {
		return nil, fileErr(ctx, "stat", root, err)
	}
	if !fi.IsDir() {
		return nil, fail("%s is not a directory; give the directory to search (read_file reads one file)", root)
	}
	skip := func(path string) string {
		if _, a, err := t.c.policy.CheckPath(safety.FileRead, path, home); err != nil || a.Level > safety.Safe {
			return "protected by the safety policy (not read)"
		}
		return ""
	}
	h := tr.Host()
	o := semsearch.Options{
		Root: root, Query: p.Query, TopK: p.TopK, Glob: p.Glob,
		Embedder: t.c.embedder, NoEmbedder: t.c.noEmbedder,
		Redact: redact.String, Skip: skip,
		CacheDir: t.c.searchCache, Host: fmt.Sprintf("%s %s@%s %s", h.Kind, h.User, h.Addr, h.Name),
	}
	if o.Embedder == nil && o.NoEmbedder == "" {
		o.NoEmbedder = NoEmbedderReason
	}
	res, err := semsearch.Search(ctx, searchFiles{tr}, o)
	if err != nil {
		return nil, fileErr(ctx, "search", root, err)
	}
	return res, nil
}

// searchFiles lists and reads files through a transport.
type searchFiles struct{ tr transport.Transport }

func (f searchFiles) ReadDir(ctx context.Context, dir string) ([]fs.FileInfo, error) {
	return transport.ReadDir(ctx, f.tr, dir)
}

func (f searchFiles) ReadFile(ctx context.Context, name string, w io.Writer) (int64, error) {
	return f.tr.ReadFile(ctx, name, w)
}
