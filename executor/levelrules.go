package executor

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	"github.com/autoshell/agent/transport"
)

// levelRules is the stage that holds a file tool to what a shell step of
// its level may do (issue 26): the file tools run in agent's process, not
// under the kernel, so each file on the host (links resolved) is checked
// against the very rules the level's commands run under
// (Confiner.LevelBlocked), reads at the safe level, writes and reads at
// medium. A step a person approved, or --approve all, runs at
// confine.None and is not held. One exception makes medium useful in ~
// (homeName): write_file and the other writers may create or change a
// name directly in ~ that is not a dot-name, not protected and not a
// secret's, journaled like every file tool change; the observation says
// so.
func (e *Executor) levelRules(ctx context.Context, s *stepRun) *denial {
	cls := s.p.cls
	files := remote(cls.files)
	cf := e.confinerFor(s.p.tr)
	if cf == nil || cls.command != "" || len(files) == 0 || s.level == confine.None {
		return nil
	}
	for _, f := range files {
		real := f.Real
		if real == "" {
			real = f.Path
		}
		write := f.Op != safety.FileRead
		if write && s.level == confine.NoProtected && e.homeName(s.p.view.home, real) {
			fi, looked := s.p.view.statOf(real)
			if !looked {
				fi, _ = s.p.tr.Stat(ctx, real)
			}
			if fi == nil {
				s.note = "[note: " + homeShort(real, s.p.view.home) + " is a new name directly in ~, which a medium shell step " +
					"cannot create (the kernel's rules cover ~ as a whole); the file tool created it, journaled: agent undo removes it]"
			}
			continue
		}
		fi, looked := s.p.view.statOf(real)
		if !looked {
			fi, _ = s.p.tr.Stat(ctx, real)
		}
		dir := fi != nil && fi.IsDir()
		for _, w := range []bool{false, true} {
			if w && !write || !w && f.Op == safety.FileWrite {
				continue
			}
			why, err := cf.LevelBlocked(ctx, s.level, w, dir, real)
			if err != nil {
				return &denial{kind: notConfined, reason: err.Error(), err: fmt.Errorf("step %d (%s): %w", s.r.Step, s.st.Tool, err)}
			}
			if why != "" {
				return &denial{kind: blockedBySandbox, reason: why}
			}
		}
	}
	return nil
}

// homeName reports whether real is a name directly in the home that a
// medium step may create: not a dot-name, not under what the policy
// protects from writes, not a secret's name.
func (e *Executor) homeName(home, real string) bool {
	if home == "" || home == "/" || path.Dir(real) != home {
		return false
	}
	base := path.Base(real)
	if strings.HasPrefix(base, ".") || localReadRefusal(e.cfg.Policy, real, home) != nil {
		return false
	}
	for _, entry := range e.cfg.Policy.Protected(home).NoWrite {
		if under(real, entry) {
			return false
		}
	}
	return true
}

func homeShort(p, home string) string {
	if rest, ok := strings.CutPrefix(p, home+"/"); ok {
		return "~/" + rest
	}
	return p
}

// homeNames is the stage that makes medium useful in ~ for shell steps
// (issue 26): the kernel's rules cover ~ as a whole, and ~ holds
// protected files, so a medium step may change the files that exist
// there but create none. A new name directly in ~ that the command
// writes (`echo ok > ~/report.txt`, `>> ~/once.log`) and that is not a
// dot-name, protected or a secret's, is created empty by agent first,
// after the journal recorded it absent (agent undo removes it): the
// rules, computed again because ~ changed, then grant the step write on
// that file alone. The observation says so.
func (e *Executor) homeNames(ctx context.Context, s *stepRun) *denial {
	cls := s.p.cls
	if cls.command == "" || s.level != confine.NoProtected || e.confinerFor(s.p.tr) == nil || len(cls.undo) == 0 {
		return nil
	}
	if _, confined := s.runOn.(wrapped); !confined {
		return nil // the host does not enforce: nothing to make room for
	}
	home := s.p.view.home
	var made []string
	for _, t := range cls.undo {
		if t.existed || t.Dir || t.tree != nil || !e.homeName(home, t.Path) {
			continue
		}
		res, err := s.p.tr.Run(ctx, transport.Command{Command: "set -C && : > " + tools.Quote(t.Path)})
		if err != nil {
			return broken(fmt.Errorf("step %d (%s): create %s: %w", s.r.Step, s.st.Tool, t.Path, err))
		}
		if res.ExitCode != 0 {
			return failed("%s: could not create %s for the step: %s", s.st.Tool, t.Path, strings.TrimSpace(res.Stderr))
		}
		made = append(made, homeShort(t.Path, home))
	}
	if len(made) > 0 {
		s.note = "[note: agent created " + strings.Join(made, ", ") + " empty before the step ran, journaled (agent undo removes it): " +
			"a medium step may write a new name directly in ~ only as a file that exists]"
	}
	return nil
}
