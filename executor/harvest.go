package executor

import (
	"context"
	"strings"

	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
)

// The session's secret set (Config.Secrets) learns the secrets of the
// files a step reads before any of the step's output is shown, logged or
// sent: the values of their secret-named keys and their private keys'
// bodies are then hidden in the output whatever the step does to their
// names (jq -r .db_password, sed 's/pass/p_a_s_s/'); see
// redact.Set.HarvestText.
//
// A command's files (its read operands and redirections, as the
// classifier found them; trees and globs aside) are read by agent through
// the step's transport before the command runs: one read each (the view
// of the host already knows what most of them are). A file tool's read
// (read_file) is its own output: harvested from it after the read, at no
// cost on the host.

// harvest is the stage before run: a command's files.
func (e *Executor) harvest(ctx context.Context, s *stepRun) *denial {
	p := s.p
	if e.cfg.Secrets == nil || p.cls.command == "" {
		return nil
	}
	for _, t := range p.cls.analysis.Touches {
		if t.Writes() || t.Tree || strings.ContainsAny(t.Path, "*?[") {
			continue
		}
		abs, err := p.view.abs(t.Path, p.cwd)
		if err != nil {
			continue
		}
		fi, known := p.view.statOf(abs)
		if known && fi == nil {
			continue // nothing there
		}
		e.cfg.Secrets.HarvestFile(ctx, p.tr, abs, fi)
	}
	return nil
}

// harvestRead is the stage after run: what a file tool read.
func (e *Executor) harvestRead(_ context.Context, s *stepRun) *denial {
	if e.cfg.Secrets == nil || s.p.cls.command != "" || !s.r.ran || s.r.Output.IsError {
		return nil
	}
	for _, f := range s.p.cls.files {
		if f.Op == safety.FileRead && !f.Local && len(s.r.Output.Stdout) <= redact.MaxHarvest {
			e.cfg.Secrets.HarvestText(f.Path, s.r.Output.Stdout)
		}
	}
	return nil
}
