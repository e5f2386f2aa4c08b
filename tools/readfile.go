package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// ReadFileName is the name of the file reading tool.
const ReadFileName = "read_file"

// ReadFileParams are read_file's parameters. offset and limit count lines:
// the spec's tools feed text to an LLM, and "lines 40–80" is what a model
// can ask for after grep -n; bytes would cut lines and runes.
type ReadFileParams struct {
	FilePath string `json:"file_path" description:"File path; ~ is home."`
	Encoding string `json:"encoding,omitempty" description:"utf-8 (default) or latin-1."`
	Offset   int    `json:"offset,omitempty" description:"First line, from 1."`
	Limit    int    `json:"limit,omitempty" description:"Max lines."`
}

func (p *ReadFileParams) check() error {
	switch strings.ToLower(strings.ReplaceAll(p.Encoding, "_", "-")) {
	case "", "utf-8", "utf8":
		p.Encoding = "utf-8"
	case "latin-1", "latin1", "iso-8859-1", "iso8859-1":
		p.Encoding = "latin-1"
	default:
		return fmt.Errorf("encoding %q is not supported; use utf-8 or latin-1", p.Encoding)
	}
	if p.Offset < 0 || p.Limit < 0 {
		return errors.New("offset and limit must not be negative")
	}
	return nil
}

// ReadFile reads a text file from the target.
type ReadFile struct {
	base[ReadFileParams]
	c *config
}

// NewReadFile returns read_file under policy's path rules and MaxReadBytes.
func NewReadFile(policy safety.Policy, opts ...Option) *ReadFile {
	return newReadFile(newConfig(policy, opts))
}

func newReadFile(c *config) *ReadFile {
	return &ReadFile{c: c, base: newBase[ReadFileParams](ReadFileName,
		"Read a text file on the target.")}
}

// Run reads the file.
func (t *ReadFile) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.run(ctx, tr, p)
}

func (t *ReadFile) run(ctx context.Context, tr transport.Transport, p ReadFileParams) (Output, error) {
	text, err := t.read(ctx, tr, p)
	return finish(t.name, TextOutput(text), err)
}

// Touches reports the file read_file reads.
func (t *ReadFile) Touches(raw json.RawMessage) (Effects, error) {
	p, err := t.params(raw)
	if err != nil {
		return Effects{}, err
	}
	return t.touches(p), nil
}

func (t *ReadFile) touches(p ReadFileParams) Effects {
	return Effects{Files: []Access{{Op: safety.FileRead, Path: p.FilePath}}}
}

func (t *ReadFile) read(ctx context.Context, tr transport.Transport, p ReadFileParams) (string, error) {
	path, err := t.c.resolve(ctx, tr, safety.FileRead, p.FilePath)
	if err != nil {
		return "", err
	}
	fi, err := tr.Stat(ctx, path)
	if err != nil {
		return "", fileErr(ctx, "stat", path, err)
	}
	if fi.IsDir() {
		return "", fail("%s is a directory; list it with find or execute_command ls", path)
	}
	ranged := p.Offset > 1 || p.Limit > 0
	if !ranged {
		if err := t.c.policy.CheckSize(safety.FileRead, fi.Size()); err != nil {
			return "", fail("%s: %v; read part of it with offset and limit (lines), or search it with grep", path, err)
		}
	}
	lw := &lineWriter{from: max(p.Offset, 1), limit: p.Limit, maxBytes: t.c.policy.MaxReadBytes}
	if _, err := tr.ReadFile(ctx, path, lw); err != nil && !lw.done {
		if lw.over {
			return "", fail("%s: the lines asked for exceed the read limit of %d bytes; ask for fewer lines", path, lw.maxBytes)
		}
		return "", fileErr(ctx, "read", path, err)
	}
	data := lw.buf.Bytes()
	if p.Offset > 1 && p.Offset > lw.lines() {
		return "", fail("%s: offset %d is past the end of the file (%d lines)", path, p.Offset, lw.lines())
	}
	if p.Encoding == "latin-1" {
		if bytes.IndexByte(data, 0) >= 0 {
			return "", fail("%s is a binary file (%d bytes); read_file returns text only", path, fi.Size())
		}
		return latin1(data), nil
	}
	if safety.IsBinary(data) {
		return "", fail("%s is a binary file or not UTF-8 (%d bytes); read_file returns text only (try encoding latin-1 for legacy text)", path, fi.Size())
	}
	return string(data), nil
}

func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

var errDone = errors.New("read enough lines")

// lineWriter keeps lines from..from+limit-1 (1-based; limit 0: all) of
// what is written, stopping the stream (errDone) once it has them and
// failing (over) past maxBytes kept.
type lineWriter struct {
	from, limit int
	maxBytes    int64
	buf         bytes.Buffer
	line        int // 1-based number of the line being written; 0 before any byte
	done, over  bool
	sawByte     bool
	endsNewline bool
}

func (l *lineWriter) lines() int {
	if !l.sawByte {
		return 0
	}
	if l.endsNewline {
		return l.line - 1
	}
	return l.line
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > 0 && !l.sawByte {
		l.sawByte, l.line = true, 1
	}
	for len(p) > 0 {
		if l.limit > 0 && l.line >= l.from+l.limit {
			l.done = true
			return 0, errDone
		}
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i+1]
		}
		if l.line >= l.from {
			if l.maxBytes > 0 && int64(l.buf.Len()+len(chunk)) > l.maxBytes {
				l.over = true
				return 0, errLimit
			}
			l.buf.Write(chunk)
		}
		p = p[len(chunk):]
		l.endsNewline = i >= 0
		if i >= 0 {
			l.line++
		}
	}
	return n, nil
}
