package executor

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
)

// CheckPlanPermissions checks, before anything runs, every step of p that
// can be resolved without running the plan against its `permissions:`
// block: the steps whose templates need only the plan's vars and preset
// (--var), and only for what can be decided without the host (its home
// directory, where a relative path starts, its symbolic links: RunStep
// checks those when the step runs). The error lists each step outside the
// permissions as a *planner.Error at the step's line, naming the
// permission it lacks (exit 2); nil when p declares none.
func CheckPlanPermissions(p *planner.Plan, reg *tools.Registry, policy safety.Policy, preset map[string]any) error {
	perms := p.Permissions
	if perms == nil {
		return nil
	}
	vars := execctx.New()
	for k, v := range p.Vars {
		_ = vars.Set(k, v)
	}
	for k, v := range preset {
		_ = vars.Set(k, v)
	}
	localHome, _ := os.UserHomeDir()
	var errs []error
	n := 0
	for _, ph := range p.Phases {
		for _, st := range ph.Steps {
			n++
			// The prepare stage's host-free part, as RunStep runs it: a
			// step that fails it needs a variable a step sets (checked
			// when it runs) or is invalid (Validate says what is wrong).
			prep, d := prepareCall(vars, reg, st)
			if d != nil {
				continue
			}
			target, local := staticNeeds(prep.call, policy)
			why := perms.Check(target, "")
			if localHome != "" {
				for _, r := range perms.Check(local, localHome) {
					why = append(why, "on this machine: "+r)
				}
			}
			if len(why) > 0 {
				errs = append(errs, &planner.Error{Source: p.Source, Line: st.Line, Step: n, Tool: st.Tool,
					Err: fmt.Errorf("outside the plan's permissions (%s): %s", perms.Source, strings.Join(why, "; "))})
			}
		}
	}
	return errors.Join(errs...)
}

// staticNeeds is what a prepared call needs, as far as it is known
// without the host: "~/…" stays, a relative path is left relative
// (undecided) unless the step gives an absolute cwd.
func staticNeeds(call *tools.Call, policy safety.Policy) (target, local safety.Needs) {
	if line, ok, err := call.CommandLine(); ok {
		if err != nil {
			return target, local
		}
		cwd, _ := call.Params["cwd"].(string)
		abs := func(p string) string {
			if p == "~" || strings.HasPrefix(p, "~/") || path.IsAbs(p) {
				return cleanStatic(p)
			}
			if cwd != "" && (path.IsAbs(cwd) || cwd == "~" || strings.HasPrefix(cwd, "~/")) {
				return cleanStatic(cwd + "/" + p)
			}
			return p
		}
		return safety.NeedsOf(policy.Analyze(line, ""), abs), local
	}
	eff, ok, err := call.Touches()
	if !ok {
		target.Unknown = []string{call.Name + ": a tool whose files are not known"}
		return target, local
	}
	if err != nil {
		return target, local
	}
	for _, a := range eff.Files {
		p := a.Path
		if a.Local {
			if !path.IsAbs(p) && !strings.HasPrefix(p, "~") {
				continue // relative to the working directory: decided when it runs
			}
			if h, err := os.UserHomeDir(); err == nil && strings.HasPrefix(p, "~") {
				p = h + strings.TrimPrefix(p, "~")
			}
		}
		need := safety.Need{Path: cleanStatic(p)}
		n := &target
		if a.Local {
			n = &local
		}
		switch a.Op {
		case safety.FileRead:
			n.Reads = append(n.Reads, need)
		case safety.FileWrite:
			n.Writes = append(n.Writes, need)
		case safety.FileEdit:
			n.Reads = append(n.Reads, need)
			n.Writes = append(n.Writes, need)
		}
	}
	return target, local
}

// cleanStatic cleans an absolute or "~/…" path lexically; a relative path
// is returned as is.
func cleanStatic(p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		rest := path.Clean("." + strings.TrimPrefix(p, "~"))
		if rest == ".." || strings.HasPrefix(rest, "../") {
			return "./" + p // climbs out of the home: decided when the home is known
		}
		if rest == "." {
			return "~"
		}
		return "~/" + rest
	case path.IsAbs(p):
		return path.Clean(p)
	}
	return p
}
