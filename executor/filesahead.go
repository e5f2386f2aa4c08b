package executor

import (
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// filesAhead has the host open its file channel (an SSH host's SFTP
// subsystem) in the background while a plan's first steps run, when a
// step of the plan will look at files: a file tool, or a command the
// classifier sees write one (its undo journal looks at the targets
// first) — unless the host's served worker looks at them
// (workerLooks). A plan of commands that write nothing opens nothing. A step
// whose parameters wait for an earlier step's result counts by its tool.
func (e *Executor) filesAhead(p *planner.Plan) {
	fa, ok := transport.As[transport.FilesAheader](e.cfg.Transport)
	if !ok || e.cfg.DryRun {
		return
	}
	for _, ph := range p.Phases {
		for _, st := range ph.Steps {
			if e.needsFiles(st) {
				fa.FilesAhead()
				return
			}
		}
	}
}

// needsFiles reports whether st will look at files on the host.
func (e *Executor) needsFiles(st planner.Step) bool {
	prep, d := prepareCall(e.vars, e.reg, st)
	if d != nil || prep.call == nil {
		return st.Tool != "execute_command"
	}
	line, ok, err := prep.call.CommandLine()
	if !ok {
		eff, ok, _ := prep.call.Touches()
		for _, f := range eff.Files {
			if ok && !f.Local {
				return true
			}
		}
		return false
	}
	if err != nil || e.workerLooks(st) {
		return false
	}
	for _, t := range e.cfg.Policy.AnalyzeParsed(safety.ParseCommand(line), "").Touches {
		if t.Writes() {
			return true
		}
	}
	return false
}

// workerLooks reports whether a command step's files are looked at and
// read back by the host's served worker (transport.LookAheader,
// transport.AfterStates), not over the file channel: the host confines
// its steps (the launcher serves as the worker) and st runs as the login
// user, confined (not --approve all, where steps run unconfined on the
// shell). Where the worker does not start after all, the looks open the
// file channel when they come.
func (e *Executor) workerLooks(st planner.Step) bool {
	_, ok := transport.As[transport.LookAheader](e.cfg.Transport)
	return ok && e.cfg.Confiner != nil && e.cfg.Approver.Mode() != safety.ModeAll && !st.Become && !e.cfg.BecomeAll
}
