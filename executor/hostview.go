package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// hostView is one step's view of its host, as the user the step runs as:
// one home ("~", and where a relative path starts on an SSH host), and
// each path it names looked at once — where it really is, what is there,
// its owner, a small file's content — and remembered, so that classifying,
// declared permissions, the sandbox check and the undo journal read the
// same answer and none asks the host again. Through become every look is
// a sudo command; with transport.Inspector it is one a path.
//
// A view is as fresh as the step: built when the step is prepared, and
// forgotten (forget) when a person took time to approve it.
type hostView struct {
	// tr is nil for the plan pre-check's view without a host: "~" stays
	// "~", a relative path stays relative unless the step's cwd is
	// absolute or under "~", and no link is known (staticAbs).
	tr transport.Transport
	// home is the step user's home, homeErr why it is not known (then
	// only "~" and relative paths fail).
	home    string
	homeErr error
	// local: the host is this machine, where a relative path starts in
	// agent's working directory (on an SSH host, in the home).
	local bool
	// readMax bounds the content a look reads ahead for the undo journal
	// (0: none): the files a journaled command writes.
	readMax int64

	mu    sync.Mutex
	paths map[string]*hostPath
}

// hostPath is what the host said of one absolute path.
type hostPath struct {
	done chan struct{} // closed once looked at
	// real is where the path leads, every link followed; "" when that is
	// not known, and why says why (lost: the connection failed).
	real     string
	why      string
	lost     bool
	notFound bool // the error was fs.ErrNotExist or ENOTDIR: a name on the way is missing
	notDir   bool // ENOTDIR: a name on the way is no directory
	// in is the inspection of real (its Info nil: nothing there); looked
	// says it was taken (a transport without Inspect only resolves).
	in     transport.Inspection
	looked bool
	// readAsked: the look asked for the content (a transport without
	// Inspect never reads it: the journal does).
	readAsked bool
}

// newHostView is the view of tr, whose user's home is home (or homeErr).
func (e *Executor) newHostView(tr transport.Transport, home string, homeErr error) *hostView {
	return &hostView{tr: tr, home: home, homeErr: homeErr, local: e.cfg.Transport.Host().Kind == "local",
		paths: map[string]*hostPath{}}
}

// abs writes a classifier path ("~/x", absolute, or relative to where the
// step starts: cwd, else the home on an SSH host, agent's working
// directory locally) as an absolute path on the host.
func (v *hostView) abs(p, cwd string) (string, error) {
	if v.tr == nil {
		return staticAbs(p, cwd), nil
	}
	switch {
	case path.IsAbs(p):
		return path.Clean(p), nil
	case v.homeErr != nil:
		return "", v.homeErr
	case p == "~":
		return v.home, nil
	case strings.HasPrefix(p, "~/"):
		return path.Join(v.home, p[2:]), nil
	}
	base := v.home // where commands start on an SSH host
	switch {
	case cwd != "":
		var err error
		if base, err = v.abs(cwd, ""); err != nil {
			return "", err
		}
	case v.local:
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		base = wd
	}
	return path.Join(base, p), nil
}

// look is what the host says of the absolute path p, asked once: with
// read, a small regular file's content too (asked again when an earlier
// look did not read it). The error is only a done ctx.
func (v *hostView) look(ctx context.Context, p string, read bool) (*hostPath, error) {
	for {
		v.mu.Lock()
		hp, ok := v.paths[p]
		if !ok {
			hp = &hostPath{done: make(chan struct{}), readAsked: read}
			v.paths[p] = hp
			v.mu.Unlock()
			v.fill(ctx, hp, p, read)
			close(hp.done)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return hp, nil
		}
		v.mu.Unlock()
		select {
		case <-hp.done: // its fields are written before done is closed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !read || !v.wantsContent(hp) {
			return hp, nil
		}
		// Looked at without its content, which is wanted now: again.
		v.mu.Lock()
		if v.paths[p] == hp {
			delete(v.paths, p)
		}
		v.mu.Unlock()
	}
}

// wantsContent reports whether a done look at a file left out content
// that a look with read would take.
func (v *hostView) wantsContent(hp *hostPath) bool {
	return !hp.readAsked && v.readMax > 0 && hp.looked && hp.in.Info != nil &&
		hp.in.Info.Mode().IsRegular() && hp.in.Info.Size() <= v.readMax
}

// lookAll looks at paths (each read ahead as read says) at once where
// the transport can (transport.LookAheader: one request to the SSH
// host's served worker, no file session), and each path it leaves as
// look would; paths already looked at are not asked again.
func (v *hostView) lookAll(ctx context.Context, la transport.LookAheader, paths []string, read []bool) {
	var mine []*hostPath
	var asked []string
	var maxes []int64
	v.mu.Lock()
	for i, p := range paths {
		if _, ok := v.paths[p]; ok {
			continue
		}
		hp := &hostPath{done: make(chan struct{}), readAsked: read[i]}
		v.paths[p] = hp
		mine, asked = append(mine, hp), append(asked, p)
		if read[i] {
			maxes = append(maxes, v.readMax)
		} else {
			maxes = append(maxes, 0)
		}
	}
	v.mu.Unlock()
	if len(mine) == 0 {
		return
	}
	ins, errs, oks := la.InspectAll(ctx, asked, maxes)
	var wg sync.WaitGroup
	for i, hp := range mine {
		if oks[i] && errs[i] != nil {
			hp.setErr(errs[i])
			close(hp.done)
			continue
		}
		if oks[i] && cleanAbs(ins[i].Real) {
			hp.real, hp.in, hp.looked = ins[i].Real, ins[i], true
			close(hp.done)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.fill(ctx, hp, asked[i], hp.readAsked)
			close(hp.done)
		}()
	}
	wg.Wait()
}

// fill asks the host about p: Inspect where the transport has it, else
// RealPath (or `readlink -f`) alone.
func (v *hostView) fill(ctx context.Context, hp *hostPath, p string, read bool) {
	max := int64(0)
	if read {
		max = v.readMax
	}
	if in, ok := transport.As[transport.Inspector](v.tr); ok {
		got, err := in.Inspect(ctx, p, max)
		if err != nil {
			hp.setErr(err)
			return
		}
		if !cleanAbs(got.Real) {
			hp.why = fmt.Sprintf("the host answered %q, not a clean absolute path", got.Real)
			return
		}
		hp.real, hp.in, hp.looked = got.Real, got, true
		return
	}
	if rp, ok := transport.As[transport.RealPather](v.tr); ok {
		real, err := rp.RealPath(ctx, p)
		switch {
		case err != nil:
			hp.setErr(err)
			return
		case !cleanAbs(real):
			hp.why = fmt.Sprintf("the host answered %q, not a clean absolute path", real)
			return
		}
		hp.real = real
	} else {
		res, err := v.tr.Run(ctx, transport.Command{Command: "readlink -f -- " + tools.Quote(p)})
		real := trimNewline(res.Stdout)
		switch {
		case err != nil:
			hp.setErr(err)
			return
		case res.ExitCode != 0:
			hp.why = "readlink failed (a loop of links, or a directory that cannot be searched)"
			return
		case !cleanAbs(real):
			hp.why = fmt.Sprintf("readlink answered %q, not a clean absolute path", real)
			return
		}
		hp.real = real
	}
	// Without Inspect, what is there is left to those who need it (the
	// journal's savedFile stats it): a lookup costs what it did.
}

// setErr notes why the path could not be looked at.
func (hp *hostPath) setErr(err error) {
	hp.why = oneLine(err.Error(), 200)
	hp.lost = errors.Is(err, transport.ErrConnection)
	hp.notDir = errors.Is(err, syscall.ENOTDIR)
	hp.notFound = errors.Is(err, fs.ErrNotExist) || hp.notDir
}

// missing reports whether the look found nothing at its path for sure:
// an Inspect that found no file there, or a missing directory on the way
// (not one that is a file: a Stat would fail otherwise).
func (hp *hostPath) missing() bool {
	return hp.looked && hp.in.Info == nil || hp.notFound && !hp.notDir && !hp.lost
}

// resolve is where the absolute path p really is, or why that is not
// known (lost: the connection failed). A missing name (or one below a
// file) is no link: the deepest directory above it that exists is
// resolved and the names below it appended. With read, a small file at p
// is read ahead for the journal. The error is only a done ctx.
func (v *hostView) resolve(ctx context.Context, p string, read bool) (real, why string, lost bool, err error) {
	rest := ""
	for {
		hp, err := v.look(ctx, p, read && rest == "")
		switch {
		case err != nil:
			return "", "", false, err
		case hp.real != "":
			if rest != "" {
				return path.Join(hp.real, rest), "", false, nil
			}
			return hp.real, "", false, nil
		case hp.lost:
			return "", hp.why, true, nil
		case !hp.notFound, p == "/", !path.IsAbs(p):
			return "", hp.why, false, nil
		}
		// Split as written: path.Dir would clean "link/.." lexically.
		i := strings.LastIndexByte(p, '/')
		rest = path.Join(p[i+1:], rest)
		p = p[:max(i, 1)]
	}
}

// real is where the absolute path p really is on the host, p itself when
// that cannot be known (the tool will fail the same way: a directory on
// the way is missing). The error is only a done ctx.
func (v *hostView) real(ctx context.Context, p string) (string, error) {
	if v.tr == nil {
		return p, nil // no host: no links known
	}
	hp, err := v.look(ctx, p, false)
	if err != nil {
		return "", err
	}
	if hp.real == "" {
		return p, nil
	}
	return hp.real, nil
}

// forget drops what the view knows: time passed (a person was asked), and
// the host may have changed.
func (v *hostView) forget() {
	v.mu.Lock()
	v.paths = map[string]*hostPath{}
	v.mu.Unlock()
}

// statOf is what the view knows of the file at the absolute path p, links
// followed, without asking: ok is false when it was not looked at.
func (v *hostView) statOf(p string) (fi fs.FileInfo, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	hp, seen := v.paths[p]
	if !seen {
		return nil, false
	}
	select {
	case <-hp.done:
	default:
		return nil, false
	}
	switch {
	case hp.missing():
		return nil, true
	case !hp.looked:
		return nil, false
	}
	return hp.in.Info, true
}

// linksOf is the hard-link count of the regular file at the absolute
// path p, links followed, when the view's look said it (transport.
// Inspection.Links, or a Stat that carries it): ok is false when it was
// not looked at or the host did not say (SFTP). Not a regular file, or
// nothing there: 0.
func (v *hostView) linksOf(p string) (n int, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	hp, seen := v.paths[p]
	if !seen {
		return 0, false
	}
	select {
	case <-hp.done:
	default:
		return 0, false
	}
	switch {
	case hp.missing():
		return 0, true
	case !hp.looked:
		return 0, false
	case hp.in.Info == nil || !hp.in.Info.Mode().IsRegular():
		return 0, true
	case hp.in.Links > 0:
		return hp.in.Links, true
	}
	if l, ok := infoLinks(hp.in.Info); ok {
		return int(l), true
	}
	return 0, false
}

// dirKnown reports, without asking, whether the view knows that the
// directory above the absolute path p exists: p was inspected and found
// missing at p itself, which Inspect (as readlink -f) answers only when
// every name above it resolved to a directory. `mkdir -p` of a new
// directory then needs no look at its parent (a round trip on an SSH host).
func (v *hostView) dirKnown(p string) bool {
	v.mu.Lock()
	hp, ok := v.paths[p]
	v.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case <-hp.done:
	default:
		return false
	}
	return hp.looked && hp.in.Info == nil && hp.real == p
}

// known is where the absolute path p leads as far as the view already
// knows, without asking the host: p itself when it was not looked at or
// could not be resolved.
func (v *hostView) known(p string) string {
	v.mu.Lock()
	hp, ok := v.paths[p]
	v.mu.Unlock()
	if !ok {
		return p
	}
	select {
	case <-hp.done:
	default:
		return p
	}
	if hp.real == "" {
		return p
	}
	return hp.real
}
