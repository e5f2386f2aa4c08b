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
// first). A plan of commands that write nothing opens nothing. A step
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
	if err != nil {
		return false
	}
	for _, t := range e.cfg.Policy.AnalyzeParsed(safety.ParseCommand(line), "").Touches {
		if t.Writes() {
			return true
		}
	}
	return false
}
