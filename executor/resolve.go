package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// A command's words say which files it touches; symbolic links already on
// the host say where those really are. Right before each step runs (after
// the steps before it ran, so links they made are there) the files a
// command reads and writes are resolved on the host it runs on, as the
// user it runs as, and rated where they really are
// (safety.Policy.ClassifyResolved). A link swapped between this look and
// the command's own is beyond any look before the run: the kernel
// enforcement holds that (docs/decisions.md).

// maxResolving bounds the lookups in flight at once (each is a few SFTP
// requests over SSH, a sudo over become).
const maxResolving = 16

// resolveTouches finds on the host where each file a command touches
// really is (through v: each path asked once a step), and returns those
// that are not where their names say (a symbolic link on the way) or could
// not be found out. A missing name is no link: its deepest existing
// directory is resolved and the rest appended. Paths that name no file
// (/dev/null, /proc/self/fd/N) and /proc (the classifier reads it as the
// step will see it) are left out. The files it writes are read ahead for
// the undo journal (v.readMax). The error is only a done ctx or a lost
// connection.
func (e *Executor) resolveTouches(ctx context.Context, v *hostView, touches []safety.Touch, cwd string) ([]safety.Touch, error) {
	type job struct {
		t         safety.Touch
		abs, look string // the path as named, and the part of it to resolve
		rest      string // a pattern's part after look, appended to where look leads
		real, why string
		lost      bool
	}
	var jobs []*job
	for _, t := range touches {
		if notAFile(t.Path) || strings.HasPrefix(t.Path, "/proc/") || strings.Contains(t.Path, "://") {
			continue
		}
		j := &job{t: t}
		abs, err := v.abs(t.Path, cwd)
		if err != nil {
			j.why = "its home directory is not known: " + err.Error()
			jobs = append(jobs, j)
			continue
		}
		j.abs, j.look = abs, abs
		if t.Raw != "" && !strings.ContainsAny(t.Raw, "*?[") {
			// "link/../x": resolved as the kernel walks it.
			if j.look, err = v.rawAbs(t.Raw, cwd); err != nil {
				j.why = "its home directory is not known: " + err.Error()
			}
		} else if i := strings.IndexAny(abs, "*?["); i >= 0 {
			// A pattern: its fixed directories are resolved, the pattern
			// is rated in the directory they lead to.
			cut := strings.LastIndexByte(abs[:i], '/')
			j.look, j.rest = abs[:max(cut, 1)], abs[cut+1:]
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	_, hasRealPath := transport.As[transport.RealPather](v.tr)
	if la, ok := transport.As[transport.LookAheader](v.tr); ok && hasRealPath && v.tr == e.cfg.Transport {
		// At once, in one round trip where the host's worker can.
		var looks []string
		var reads []bool
		for _, j := range jobs {
			if j.why == "" {
				looks = append(looks, j.look)
				reads = append(reads, j.t.Writes() && j.rest == "" && j.look == j.abs)
			}
		}
		v.lookAll(ctx, la, looks, reads)
	}
	if hasRealPath {
		var wg sync.WaitGroup
		sem := make(chan struct{}, maxResolving)
		for _, j := range jobs {
			if j.why != "" {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				read := j.t.Writes() && j.rest == "" && j.look == j.abs
				j.real, j.why, j.lost, _ = v.resolve(ctx, j.look, read)
			}()
		}
		wg.Wait()
	} else {
		var looks []string
		for _, j := range jobs {
			if j.why == "" {
				looks = append(looks, j.look)
			}
		}
		reals, err := e.readlinkAll(ctx, v.tr, looks)
		if err != nil {
			return nil, err
		}
		i := 0
		for _, j := range jobs {
			if j.why == "" {
				j.real, j.why = reals[i].real, reals[i].why
				i++
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []safety.Touch
	for _, j := range jobs {
		if j.lost {
			return nil, fmt.Errorf("resolving %s on the host: %w", j.abs, transport.ErrConnection)
		}
		r := resolved(j.t, "", j.why)
		if j.why == "" {
			r.Real = j.real
			if j.rest != "" {
				r.Real = path.Join(j.real, j.rest)
			}
		}
		if r.Real != path.Clean(j.abs) { // else no link on the way
			out = append(out, r)
		}
		if hasRealPath && j.why == "" && j.t.Writes() && j.rest != "" && !strings.Contains(j.rest, "/") {
			links, err := patternLinks(ctx, v, j.real, j.rest, j.t)
			if err != nil {
				return nil, err
			}
			out = append(out, links...)
		}
	}
	return out, nil
}

// maxPatternLinks bounds the symbolic links among a pattern's matches that
// are followed; more are rated as links not known.
const maxPatternLinks = 16

// resolved is t where the host says it really is (real), or why that
// is not known.
func resolved(t safety.Touch, real, why string) safety.Touch {
	t.Real, t.Unresolved = real, why
	return t
}

// patternLinks lists dir, where a write's pattern names files, and
// resolves the symbolic links among the names pattern matches (as the
// shell matches: a leading dot only by a dot): a write through them
// (chmod, tee, truncate …) changes where they lead. A directory that
// cannot be listed yields none: the command cannot list it either. The
// error is only a done ctx or a lost connection.
func patternLinks(ctx context.Context, v *hostView, dir, pattern string, t safety.Touch) ([]safety.Touch, error) {
	entries, err := transport.ReadDir(ctx, v.tr, dir)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, transport.ErrConnection):
		return nil, fmt.Errorf("listing %s on the host: %w", dir, err)
	case err != nil:
		return nil, nil
	}
	goPattern := strings.ReplaceAll(pattern, "[!", "[^") // the shell's negation
	var out []safety.Touch
	for _, fi := range entries {
		name := fi.Name()
		if fi.Mode()&fs.ModeSymlink == 0 || strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
			continue
		}
		if ok, err := path.Match(goPattern, name); !ok && err == nil {
			continue // a pattern Go cannot read counts as matching
		}
		if len(out) == maxPatternLinks {
			out = append(out, resolved(t, "", fmt.Sprintf("more than %d symbolic links match %s", maxPatternLinks, pattern)))
			break
		}
		real, why, lost, err := v.resolve(ctx, path.Join(dir, name), false)
		switch {
		case err != nil:
			return nil, err
		case lost:
			return nil, fmt.Errorf("resolving %s on the host: %w", path.Join(dir, name), transport.ErrConnection)
		}
		out = append(out, resolved(t, real, why))
	}
	return out, nil
}

// rawAbs is abs for a Touch.Raw: the same start, but its ".." left for
// the host to walk.
func (v *hostView) rawAbs(raw, cwd string) (string, error) {
	switch {
	case path.IsAbs(raw):
		return raw, nil
	case raw == "~" || strings.HasPrefix(raw, "~/"):
		home, err := v.abs("~", cwd)
		return home + raw[1:], err
	}
	base, err := v.abs(".", cwd)
	return base + "/" + raw, err
}

type readlinkResult struct{ real, why string }

// readlinkAll resolves paths on a host whose transport cannot do it
// itself, with one command for all of them: the deepest name of each that
// exists (or is a link) is resolved with `readlink -f` (GNU and busybox;
// it fails on a loop), the missing names below it appended. Each answer is
// "ok" and the path, or "no", ended by NUL ($(…) keeps a path's trailing
// newlines: "." is printed after it and taken off).
func (e *Executor) readlinkAll(ctx context.Context, tr transport.Transport, paths []string) ([]readlinkResult, error) {
	var b strings.Builder
	b.WriteString("for f in")
	for _, p := range paths {
		b.WriteString(" " + tools.Quote(p))
	}
	b.WriteString(`; do d=$f s=; ` +
		`while [ "$d" != / ] && [ ! -e "$d" ] && [ ! -L "$d" ]; do s=/${d##*/}$s; d=${d%/*}; [ -n "$d" ] || d=/; done; ` +
		`if r=$(readlink -f -- "$d" && echo .); then r=${r%.}; printf 'ok%s%s\0' "${r%?}" "$s"; else printf 'no\0'; fi; done`)
	res, err := tr.Run(ctx, transport.Command{Command: b.String()})
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		if errors.Is(err, transport.ErrConnection) {
			return nil, fmt.Errorf("resolving paths on the host: %w", err)
		}
		res.Stdout = ""
	}
	return parseReadlinks(res.Stdout, len(paths)), nil
}

// parseReadlinks reads readlinkAll's answer for n paths: n records, each
// "ok" and a path or "no", ended by NUL. The host's answer is outside
// input: a record count that differs, or an answer that is not a clean
// absolute path, leaves the path unresolved.
func parseReadlinks(out string, n int) []readlinkResult {
	res := make([]readlinkResult, n)
	recs := strings.Split(out, "\x00")
	if len(recs) != n+1 || recs[n] != "" {
		for i := range res {
			res[i].why = fmt.Sprintf("readlink answered %d records for %d paths", len(recs)-1, n)
		}
		return res
	}
	for i := range res {
		r, ok := strings.CutPrefix(recs[i], "ok")
		switch {
		case !ok:
			res[i].why = "readlink failed (a loop of links, or a directory that cannot be searched)"
		case r == "" || !path.IsAbs(r) || path.Clean(r) != r:
			res[i].why = fmt.Sprintf("readlink answered %q, not a clean absolute path", r)
		default:
			res[i].real = r
		}
	}
	return res
}

// classifyResolved rates a command's files where they really are on the
// host (resolveTouches), for the user v acts as
// (safety.Policy.AnalyzeResolvedParsed), with the home it was classified
// with and the trees it was parsed into once.
func (e *Executor) classifyResolved(ctx context.Context, c classification, v *hostView, cwd string) (classification, error) {
	touches := c.analysis.Touches
	for _, p := range c.analysis.LinkProbes { // protected links a metadata change must not reach
		touches = append(touches, safety.Touch{Path: p})
	}
	rs, err := e.resolveTouches(ctx, v, touches, cwd)
	if err != nil || len(rs) == 0 {
		return c, err
	}
	c.analysis = e.cfg.Policy.AnalyzeResolvedParsed(c.parsed, v.home, rs)
	c.risk = c.analysis.Assessment
	return c, nil
}
