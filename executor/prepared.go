package executor

import (
	"context"
	"io"
	"io/fs"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// prepared is one step worked out once, read by every stage after
// prepare and re-derived by none: the resolved call, the transport it runs
// on and the user it runs as, the step's one home, the view of the host
// through which each path is looked at once, and what classify found.
//
// It is the hook for what builds on a step: the files it reads and writes
// (files: a file tool's; cls.analysis.Touches and cls.undo: a command's),
// resolved on its host (view).
type prepared struct {
	st     planner.Step
	params map[string]any // templates resolved
	call   *tools.Call
	// tr is the transport the step runs on: the become user's when it runs
	// as them (as), else the login user's.
	tr transport.Transport
	as string
	// view is the host as tr's user sees it. Its home is the step's one
	// home: the command is classified with it, "~" and relative paths are
	// resolved against it — the become user's for a become step.
	view *hostView
	cwd  string // the command's cwd parameter, "" for where steps start
	cls  classification
	// needs is what the step needs of declared permissions (permissions
	// stage).
	needs stepNeeds
}

// prepare resolves the step's templates, decodes its parameters into the
// tool's (tools.Registry.Prepare), picks its transport and looks up the
// home of the user it runs as. A denial is a step the model may fix.
func (e *Executor) prepare(ctx context.Context, st planner.Step) (*prepared, *denial) {
	p, d := prepareCall(e.vars, e.reg, st)
	if d != nil {
		return p, d
	}
	var err error
	if p.tr, p.as, err = e.stepTransport(st); err != nil {
		return p, failed("%s", err)
	}
	p.cwd, _ = p.call.Params["cwd"].(string)
	home, herr := e.homeDirOf(ctx, p.tr)
	if herr != nil {
		if cerr := ctx.Err(); cerr != nil {
			return p, broken(cerr)
		}
	}
	p.view = e.newHostView(p.tr, home, herr)
	if e.cfg.Journal != nil {
		p.view.readMax = min(e.journalMax(), readAhead)
	}
	return p, nil
}

// prepareCall is the part of prepare that needs no host: the step's
// templates resolved over vars, its parameters decoded by reg. The plan
// pre-check (CheckPlanPermissions) runs it too.
func prepareCall(vars *execctx.Context, reg *tools.Registry, st planner.Step) (*prepared, *denial) {
	params, err := vars.ResolveParams(st.Parameters, tools.ShellParameters[st.Tool]...)
	if err != nil {
		return &prepared{st: st, params: st.Parameters}, failed("%s", err)
	}
	p := &prepared{st: st, params: params}
	if p.call, err = reg.Prepare(st.Tool, params); err != nil {
		return p, failed("%s", err)
	}
	return p, nil
}

// readAhead bounds what a look at a file a command writes reads ahead for
// the undo journal (a bigger file is read when journaled).
const readAhead = 1 << 20

// stale forgets what the step's view knew of the host, and the content
// read ahead for the journal: time passed (a person was asked).
func (p *prepared) stale() {
	p.view.forget()
	for i := range p.cls.undo {
		p.cls.undo[i].content, p.cls.undo[i].prefetched = nil, false
	}
}

// viewed is the step's transport for a file tool: its Stat of a path the
// step's view looked at is answered from the view (the file tools stat
// before they read, and the session's index after), until something is
// written through it.
func (p *prepared) viewed() transport.Transport { return viewedTransport{p.tr, p.view} }

// viewedTransport answers Stat from a step's view (see prepared.viewed);
// everything else is the transport's own, capabilities included.
type viewedTransport struct {
	transport.Transport
	v *hostView
}

func (t viewedTransport) Stat(ctx context.Context, path string) (fs.FileInfo, error) {
	if fi, ok := t.v.statOf(path); ok {
		if fi == nil {
			return nil, &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
		}
		return fi, nil
	}
	return t.Transport.Stat(ctx, path)
}

func (t viewedTransport) WriteFile(ctx context.Context, path string, r io.Reader, perm fs.FileMode) (int64, error) {
	t.v.forget()
	return t.Transport.WriteFile(ctx, path, r, perm)
}

func (t viewedTransport) Run(ctx context.Context, c transport.Command) (transport.Result, error) {
	t.v.forget()
	return t.Transport.Run(ctx, c)
}

// Unwrap returns the step's transport (transport.Unwrapper).
func (t viewedTransport) Unwrap() transport.Transport { return t.Transport }

// touched is what the step reads and writes on its host, as absolute
// paths where the step's view found them (links followed; a path it did
// not look at as named; a pattern as written): a file tool's files, a
// command's from the classifier (safety.Touch). The hook for what builds
// on a step (the files a step reads, for the secrets they hold; the file
// tools under the kernel's rules). A path relative to an unknown home is
// left out.
func (p *prepared) touched() (reads, writes []string) {
	seen := map[bool]map[string]bool{false: {}, true: {}}
	add := func(write bool, path string) {
		if seen[write][path] {
			return
		}
		seen[write][path] = true
		if write {
			writes = append(writes, path)
		} else {
			reads = append(reads, path)
		}
	}
	for _, f := range remote(p.cls.files) {
		real := f.Real
		if real == "" {
			real = f.Path
		}
		add(f.Op != safety.FileRead, real)
		if f.Op == safety.FileEdit {
			add(false, real)
		}
	}
	for _, t := range p.cls.analysis.Touches {
		abs, err := p.view.abs(t.Path, p.cwd)
		if err != nil || notAFile(t.Path) {
			continue
		}
		add(t.Writes(), p.view.known(abs))
	}
	return reads, writes
}
