package executor

import (
	"context"
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
// without the host: classify's host-free part (a command analysed without
// a home, a file tool's declared files as written), then the needs of the
// permissions stage (needsOf) over a view without a host.
func staticNeeds(call *tools.Call, policy safety.Policy) (target, local safety.Needs) {
	p := &prepared{call: call, view: &hostView{}}
	p.cwd, _ = call.Params["cwd"].(string)
	if line, ok, err := call.CommandLine(); ok {
		if err != nil {
			return target, local
		}
		p.cls.command, p.cls.parsed = line, safety.ParseCommand(line)
		p.cls.analysis = policy.AnalyzeParsed(p.cls.parsed, "")
	} else if eff, ok, err := call.Touches(); ok {
		if err != nil {
			return target, local
		}
		for _, a := range eff.Files {
			f := safety.Touch{Op: a.Op, Path: cleanStatic(a.Path), Local: a.Local}
			if a.Local {
				if !path.IsAbs(a.Path) && !strings.HasPrefix(a.Path, "~") {
					continue // relative to the working directory: decided when it runs
				}
				if h, err := os.UserHomeDir(); err == nil && strings.HasPrefix(a.Path, "~") {
					f.Path = cleanStatic(h + strings.TrimPrefix(a.Path, "~"))
				}
			}
			p.cls.files = append(p.cls.files, f)
		}
	}
	n, _ := needsOf(context.Background(), p) // no host: nothing to fail
	return n.target, n.local
}

// staticAbs is a classifier path as far as it is known without the host:
// "~/…" and absolute paths cleaned, a relative path joined to a cwd that
// is one of those, else left relative (undecided).
func staticAbs(p, cwd string) string {
	if p == "~" || strings.HasPrefix(p, "~/") || path.IsAbs(p) {
		return cleanStatic(p)
	}
	if cwd != "" && (path.IsAbs(cwd) || cwd == "~" || strings.HasPrefix(cwd, "~/")) {
		return cleanStatic(cwd + "/" + p)
	}
	return p
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
