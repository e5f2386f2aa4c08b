package semsearch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Embedder turns texts into vectors (an OpenAI-compatible embeddings
// endpoint). Model names the model, for the cache and the result line.
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// DefaultTopK is how many passages a search returns by default.
const DefaultTopK = 5

// embedBatch is how many passages go in one embeddings request.
const embedBatch = 64

// Options are one search's inputs. Root must be an absolute, cleaned
// directory path; Query must hold a word.
type Options struct {
	Root  string
	Query string
	TopK  int    // 0: DefaultTopK
	Glob  string // see ValidGlob
	// Embedder ranks by vectors; nil ranks by BM25, NoEmbedder saying why.
	Embedder   Embedder
	NoEmbedder string
	// Redact is applied to a passage before it is embedded (it leaves the
	// operator's machine); nil sends it as read.
	Redact func(string) string
	// Skip says why a path must not be read ("protected"), or "".
	Skip func(path string) string
	// CacheDir holds the cached indexes; "" caches nothing. Host names the
	// host in the cache key.
	CacheDir string
	Host     string
	Limits   Limits
}

// Hit is one passage found.
type Hit struct {
	Path       string
	Start, End int
	Score      float64
	Snippet    string
}

// Result is what a search found and how.
type Result struct {
	// Mode is "embeddings" or "bm25"; Model the embeddings model; Note why
	// BM25 was used, or what went wrong with the cache.
	Mode, Model string
	Notes       []string
	Hits        []Hit
	// Files and Chunks count what was ranked; Embedded the files whose
	// passages were embedded in this search (EmbeddedChunks passages),
	// Cached those whose vectors came from the cache.
	Files, Chunks            int
	Embedded, EmbeddedChunks int
	Cached                   int
	skips                    skips
}

// doc is one passage being ranked.
type doc struct {
	path  string
	chunk Chunk
	vec   []float32
}

// Search ranks the passages of Root's text files against Query. An error
// listing Root is returned as is; files that cannot be read are skipped
// and reported in the result.
func Search(ctx context.Context, fsys Files, o Options) (*Result, error) {
	if strings.TrimSpace(o.Query) == "" {
		return nil, errors.New("query is empty")
	}
	if err := ValidGlob(o.Glob); err != nil {
		return nil, err
	}
	if o.TopK <= 0 {
		o.TopK = DefaultTopK
	}
	lim := o.Limits.orDefault()
	res := &Result{}
	cands, err := walk(ctx, fsys, o.Root, o.Glob, o.Skip, lim, &res.skips)
	if err != nil {
		return nil, err
	}
	ix, note := loadIndex(o.CacheDir, o.Host, o.Root)
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	r := &reader{fsys: fsys, lim: lim, res: res, texts: map[string][]Chunk{}}
	next := &index{Version: cacheVersion, Host: o.Host, Root: o.Root, Model: ix.Model, Files: map[string]*fileEntry{}}

	var docs []doc
	if o.Embedder != nil {
		walked := res.skips.clone()
		docs, err = searchVectors(ctx, o, r, cands, ix, next)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			o.NoEmbedder = fmt.Sprintf("the embeddings model %s failed: %v", o.Embedder.Model(), err)
			o.Embedder = nil
			*res = Result{Notes: res.Notes, skips: walked}
			r.total = 0
			next.Files = map[string]*fileEntry{}
			next.Model = ix.Model
		}
	}
	if o.Embedder == nil {
		docs = searchBM25(ctx, o, r, cands, ix, next)
		res.Mode = "bm25"
		res.Notes = append([]string{o.NoEmbedder}, res.Notes...)
	} else {
		res.Mode, res.Model = "embeddings", o.Embedder.Model()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := next.save(o.CacheDir); err != nil {
		res.Notes = append(res.Notes, err.Error())
	}
	res.Chunks = len(docs)
	sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].Score > res.Hits[j].Score })
	if len(res.Hits) > o.TopK {
		res.Hits = res.Hits[:o.TopK]
	}
	r.snippets(ctx, res.Hits, o.Query)
	return res, nil
}

// searchVectors ranks by cosine similarity, embedding the passages of files
// not in the cache (or changed since), and reading only those.
func searchVectors(ctx context.Context, o Options, r *reader, cands []candidate, ix, next *index) ([]doc, error) {
	model := o.Embedder.Model()
	qv, err := o.Embedder.Embed(ctx, []string{o.Query})
	if err != nil {
		return nil, err
	}
	if len(qv) != 1 || len(qv[0]) == 0 {
		return nil, fmt.Errorf("%d vectors for 1 query", len(qv))
	}
	next.Model = model
	var docs []doc
	var fresh []candidate
	for _, c := range cands {
		e := ix.Files[c.path]
		if e != nil && e.Size == c.size && e.Mtime == c.mtime && (e.Skip != "" || ix.Model == model) {
			next.Files[c.path] = e
			if e.Skip != "" {
				r.res.skips.add(e.Skip, c.path)
				continue
			}
			r.res.Cached++
			r.res.Files++
			for _, ch := range e.Chunks {
				docs = append(docs, doc{path: c.path, chunk: Chunk{Start: ch.Start, End: ch.End}, vec: unpackVec(ch.Vec)})
			}
			continue
		}
		fresh = append(fresh, c)
	}
	var pending []doc
	r.readAll(ctx, fresh, func(c candidate, chunks []Chunk, skip string) {
		next.Files[c.path] = &fileEntry{Size: c.size, Mtime: c.mtime, Skip: skip}
		if skip != "" || len(chunks) == 0 {
			return
		}
		r.res.Files++
		r.res.Embedded++
		for _, ch := range chunks {
			pending = append(pending, doc{path: c.path, chunk: ch})
		}
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for i := 0; i < len(pending); i += embedBatch {
		batch := pending[i:min(i+embedBatch, len(pending))]
		texts := make([]string, len(batch))
		for j, d := range batch {
			texts[j] = d.chunk.Text
			if o.Redact != nil {
				texts[j] = o.Redact(texts[j])
			}
		}
		vecs, err := o.Embedder.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("%d vectors for %d passages", len(vecs), len(batch))
		}
		for j := range batch {
			batch[j].vec = vecs[j]
			e := next.Files[batch[j].path]
			e.Chunks = append(e.Chunks, cacheChunk{Start: batch[j].chunk.Start, End: batch[j].chunk.End, Vec: packVec(vecs[j])})
		}
	}
	r.res.EmbeddedChunks = len(pending)
	docs = append(docs, pending...)
	for _, d := range docs {
		r.res.Hits = append(r.res.Hits, Hit{Path: d.path, Start: d.chunk.Start, End: d.chunk.End, Score: Cosine(qv[0], d.vec)})
	}
	return docs, nil
}

// searchBM25 reads every file and ranks its passages lexically. Cached
// vectors of unchanged files are kept for a later search with a model.
func searchBM25(ctx context.Context, o Options, r *reader, cands []candidate, ix, next *index) []doc {
	var docs []doc
	r.readAll(ctx, cands, func(c candidate, chunks []Chunk, skip string) {
		if e := ix.Files[c.path]; e != nil && e.Size == c.size && e.Mtime == c.mtime && e.Skip == skip {
			next.Files[c.path] = e
		} else {
			next.Files[c.path] = &fileEntry{Size: c.size, Mtime: c.mtime, Skip: skip}
		}
		if skip != "" || len(chunks) == 0 {
			return
		}
		r.res.Files++
		for _, ch := range chunks {
			docs = append(docs, doc{path: c.path, chunk: ch})
		}
	})
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.chunk.Text
	}
	for i, s := range BM25(o.Query, texts) {
		if s > 0 {
			r.res.Hits = append(r.res.Hits, Hit{Path: docs[i].path, Start: docs[i].chunk.Start, End: docs[i].chunk.End, Score: s})
		}
	}
	return docs
}

// readWorkers is how many files are read at once (SFTP requests overlap).
const readWorkers = 8

// reader reads candidates within the limits and keeps their chunks for
// the snippets.
type reader struct {
	fsys Files
	lim  Limits
	res  *Result

	mu    sync.Mutex
	total int64
	texts map[string][]Chunk
}

// readAll reads cands concurrently and calls done for each, in cands'
// order, with its chunks or why it was skipped ("binary"); files that
// could not be read or were over the total bound are counted as skipped
// and not passed to done.
func (r *reader) readAll(ctx context.Context, cands []candidate, done func(candidate, []Chunk, string)) {
	type out struct {
		chunks []Chunk
		skip   string
		err    error
		over   bool
	}
	outs := make([]out, len(cands))
	var wg sync.WaitGroup
	sem := make(chan struct{}, readWorkers)
	for i, c := range cands {
		r.mu.Lock()
		over := r.total+c.size > r.lim.MaxTotalBytes
		if !over {
			r.total += c.size
		}
		r.mu.Unlock()
		if over {
			outs[i].over = true
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outs[i].chunks, outs[i].skip, outs[i].err = r.read(ctx, c)
		}()
	}
	wg.Wait()
	for i, c := range cands {
		switch o := outs[i]; {
		case o.over:
			r.res.skips.add(fmt.Sprintf("over the bound of %d bytes read per search", r.lim.MaxTotalBytes), c.path)
		case o.err != nil:
			if ctx.Err() == nil {
				r.res.skips.add("unreadable", c.path+": "+reason(o.err))
			}
		default:
			if o.skip != "" {
				r.res.skips.add(o.skip, c.path)
			}
			done(c, o.chunks, o.skip)
		}
	}
}

// read reads one file and chunks it; a binary file is skip "binary".
func (r *reader) read(ctx context.Context, c candidate) ([]Chunk, string, error) {
	var buf bytes.Buffer
	lw := &limitWriter{w: &buf, n: r.lim.MaxFileBytes}
	if _, err := r.fsys.ReadFile(ctx, c.path, lw); err != nil {
		if lw.over {
			return nil, fmt.Sprintf("larger than %d bytes", r.lim.MaxFileBytes), nil
		}
		return nil, "", err
	}
	data := buf.Bytes()
	if isBinary(data) {
		return nil, "binary", nil
	}
	chunks := Split(data, ChunkLines, ChunkOverlap)
	r.mu.Lock()
	r.texts[c.path] = chunks
	r.mu.Unlock()
	return chunks, "", nil
}

// isBinary: a NUL byte or invalid UTF-8 in the first 8 KiB (a rune cut at
// the end does not count), as safety.IsBinary.
func isBinary(b []byte) bool {
	head := b[:min(len(b), 8<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if len(head) < len(b) {
		for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

var errTooLarge = errors.New("file grew past the size bound")

// limitWriter fails once more than n bytes are written (a file that grew
// between listing and reading).
type limitWriter struct {
	w    *bytes.Buffer
	n    int64
	over bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(l.w.Len()+len(p)) > l.n {
		l.over = true
		return 0, errTooLarge
	}
	return l.w.Write(p)
}
