package executor

import (
	"context"
	"time"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
)

// touchFiles notes in the session's file index (execctx.SessionFiles) the
// file a successful step read, wrote, edited or transferred: the host, the
// resolved path, its size (one Stat after the step; -1 when that fails),
// the time and how. A directory (semantic_search's) is not a file of the
// session.
func (e *Executor) touchFiles(ctx context.Context, p *prepared, r StepResult) {
	tool := p.call.Name
	local := ""
	if f, ok := localFile(p.cls.files); ok {
		local = f.Path
	}
	if r.Status != execctx.StatusOK || r.DryRun || r.Path == "" || len(r.files) == 0 {
		return
	}
	size := int64(-1)
	if fi, err := p.viewed().Stat(ctx, r.Path); err == nil {
		if fi.IsDir() {
			return
		}
		size = fi.Size()
	}
	now := time.Now()
	for _, sf := range r.files {
		op := sf.Op
		f := execctx.SessionFile{Host: e.host, Path: r.Path, Size: size, When: now}
		switch {
		case tool == tools.UploadFileName && op == safety.FileWrite:
			f.Ops, f.Local = []execctx.FileEvent{execctx.FileUploaded}, local
		case tool == tools.DownloadFileName && op == safety.FileRead:
			f.Ops, f.Local = []execctx.FileEvent{execctx.FileDownloaded}, local
		case op == safety.FileRead:
			f.Ops = []execctx.FileEvent{execctx.FileRead}
		case op == safety.FileWrite:
			f.Ops = []execctx.FileEvent{execctx.FileWritten}
		case op == safety.FileEdit:
			f.Ops = []execctx.FileEvent{execctx.FileEdited}
		default:
			continue
		}
		e.vars.Touch(f)
	}
}
