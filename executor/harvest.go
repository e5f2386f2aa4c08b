package executor

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
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
// of the host already knows what most of them are). So are the other
// words of the command that read as paths (pathWords), up to 8: a file
// given to or opened by a script the classifier cannot see into. A file tool's read
// (read_file) is its own output: harvested from it after the read, at no
// cost on the host.

// harvest is the stage before run: a command's files.
func (e *Executor) harvest(ctx context.Context, s *stepRun) *denial {
	p := s.p
	if e.cfg.Secrets == nil || p.cls.command == "" {
		return nil
	}
	touched := map[string]bool{}
	var roots []string // trees and globs read: harvestTrees
	computed := computesPaths.MatchString(p.cls.command)
	history := showsHistory.MatchString(p.cls.command)
	recursive := computed || history || readsTrees.MatchString(p.cls.command)
	var dirs []string // directories named: where a repository may be
	// harvest reads p0, a path the classifier resolved or (word) a path
	// word of the command, cut where a computed part begins
	harvest := func(p0 string, word bool) {
		abs, err := p.view.abs(p0, p.cwd)
		if err != nil || touched[abs] {
			return
		}
		touched[abs] = true
		fi, known := p.view.statOf(abs)
		if known && fi == nil && !(computed && word) {
			return // nothing there
		}
		if recursive && fi == nil {
			if fi, err = p.tr.Stat(ctx, abs); err != nil {
				// a path word the command completes (~/app/conf of
				// ~/app/conf$n.yml): the directory it is in; not a
				// missing path the classifier resolved whole (tr's
				// sets were: a $ elsewhere in the command walked the
				// working directory)
				if dir := path.Dir(abs); computed && word && dir != abs && !touched[dir] && len(roots) < maxPathWords {
					if fi, err := p.tr.Stat(ctx, dir); err == nil && fi.IsDir() {
						touched[dir] = true
						roots = append(roots, dir)
					}
				}
				return
			}
		}
		if fi != nil && fi.IsDir() {
			dirs = append(dirs, abs)
			// a directory a recursive reader walks (grep -rh, tar -C
			// DIR, zip -r) is a tree the classifier did not see
			if recursive && len(roots) < maxPathWords {
				roots = append(roots, abs)
			}
			return
		}
		e.cfg.Secrets.HarvestFile(ctx, p.tr, abs, fi)
	}
	for _, t := range p.cls.analysis.Touches {
		if t.Writes() || t.Tree || strings.ContainsAny(t.Path, "*?[") {
			// a path the classifier knows (written, a tree) is no
			// script's file: not stat'ed again as a path word
			if abs, err := p.view.abs(t.Path, p.cwd); err == nil {
				if !touched[abs] && !t.Writes() && len(roots) < maxPathWords {
					roots = append(roots, abs)
				}
				touched[abs] = true
			}
			continue
		}
		harvest(t.Path, false)
	}
	for _, w := range pathWords(p.cls.command) {
		if strings.ContainsAny(w, "*?") {
			if abs, err := p.view.abs(w, p.cwd); err == nil && !touched[abs] && len(roots) < maxPathWords {
				touched[abs] = true
				roots = append(roots, abs)
			}
			continue
		}
		harvest(w, true)
	}
	wd, _ := p.view.abs(".", p.cwd)
	if len(roots) == 0 && wd != "" && substitutes.MatchString(p.cls.command) {
		// cat $(ls | grep env): the files are where the step starts
		roots = append(roots, wd)
	}
	var errs []error
	if history {
		errs = append(errs, e.harvestGit(ctx, p.tr, p.cls.command, func(s string) (string, error) { return p.view.abs(s, p.cwd) }, dirs, wd))
	}
	if len(roots) > 0 {
		errs = append(errs, e.harvestTrees(ctx, p.tr, roots))
	}
	if listsProcesses.MatchString(p.cls.command) {
		errs = append(errs, e.harvestProcesses(ctx, p.tr)) // the environments too
	} else if printsEnvironment(p.cls.command) {
		errs = append(errs, e.harvestEnv(ctx, p.tr))
	}
	if err := errors.Join(errs...); err != nil {
		return harvestUnfinished(err)
	}
	return nil
}

// harvestTimeout bounds each of the harvest's own commands on the host
// (trees, git history, process listings, environments): a few hundred
// milliseconds on a loaded machine, but a hung mount may hold find.
const harvestTimeout = 30 * time.Second

// harvestUnfinished ends a step whose harvest did not finish (timed out,
// connection lost, interrupted) before it ran: what the step would show
// may hold secrets the set has not learnt, in shapes the patterns do not
// see, so it is not run rather than run and sent anyway
// (docs/decisions.md, "A harvest that did not finish fails the step").
func harvestUnfinished(err error) *denial {
	return failed("not run: agent reads what this step reads before it runs, to hide the secrets it would show, "+
		"and that read did not finish (%s); nothing ran: try again, or read less at once", oneLine(err.Error(), 200))
}

// pathWordRE matches a word of a command that reads as a file's path:
// absolute, from the home (~/) or the working directory (./, ../),
// wherever it is: an operand of a command the classifier does not know
// reads it (python3 -c '…' FILE), a script's own open('/x/app.json'),
// glob.glob('/x/*.json') (a glob: its files are read, harvestTrees).
var pathWordRE = regexp.MustCompile(`(?:^|[\s'"=(,:;|&<>])((?:~|\.{1,2})?/[A-Za-z0-9._@%+~*?-]+(?:/[A-Za-z0-9._@%+~*?-]+)*)`)

// maxPathWords bounds the paths pathWords gives: each may cost a stat on
// the host.
const maxPathWords = 8

// pathWords are the paths pathWordRE finds in command, at most
// maxPathWords, but the kernel's (/proc, /sys, /dev); the classifier's
// own reads are harvested before them and not again, and a directory is
// not read (HarvestFile reads regular files only).
func pathWords(command string) []string {
	var out []string
	for _, m := range pathWordRE.FindAllStringSubmatch(command, -1) {
		w := m[1]
		if strings.HasPrefix(w, "/proc/") || strings.HasPrefix(w, "/sys/") || strings.HasPrefix(w, "/dev/") {
			continue
		}
		if out = append(out, w); len(out) == maxPathWords {
			break
		}
	}
	return out
}

// computesPaths matches a command whose paths are computed as it runs:
// a command substitution, a variable, a loop reading names (while read,
// for … in), xargs, find -exec, eval, brace expansion. A directory it
// names (or the one a missing path it names would be in) is read as a
// tree (harvestTrees): `d=~/app; cat $d/.env`, `ls ~/app | while read f;
// do cat ~/app/$f; done`, `cd ~/app && cat $(ls | grep env)`.
var computesPaths = regexp.MustCompile("\\$[({A-Za-z_]|`|(?:^|[\\s|;&(])(?:xargs|while|for|eval)\\s|\\s-exec(?:dir)?\\s|[^\\s'\"]\\{[^\\s{}]*,")

// substitutes matches a command that computes names from a listing: a
// command substitution of a command that lists or prints names ($(ls
// …), $(find …), $(echo …)), xargs, a loop, find -exec; one that names
// no directory reads where it starts. (kill $(pgrep x), echo $(date):
// no names, no read.)
var substitutes = regexp.MustCompile("(?:\\$\\(|`)\\s*(?:ls|find|grep|egrep|echo|printf|cat|head|tail|sort|realpath|readlink|basename|dirname|locate|compgen|stat)(?:$|[\\s|;&)`])|" +
	"(?:^|[\\s|;&(])(?:xargs|while|for)\\s|\\s-exec(?:dir)?\\s")

// listsProcesses matches a command that shows other processes' arguments
// or environments: ps and its like, /proc's cmdline and environ files.
var listsProcesses = regexp.MustCompile("(?:^|[\\s|;&(`/])(?:ps|pgrep|pstree|top|htop|procs)(?:$|[\\s|;&)`])|/proc/")

// processListing prints the processes' arguments (every process's, one
// after another, on one line: the patterns need no line of their own)
// and the variables of their environments whose names hold a secret
// word (a variable a line), as far as the step's user may read them;
// BusyBox has no ps -o args everywhere, /proc is on every Linux. Four
// processes whatever the host runs (a tr per process took seconds on a
// loaded host), and the environments filtered there: whole, they
// overflowed the capture and the middle of the listing was lost.
const processListing = `cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\000' ' '; echo; ` +
	`cat /proc/[0-9]*/environ 2>/dev/null | tr '\000' '\n' | grep -iE '^[a-z0-9_.-]*(pass|pwd|secret|token|key|auth|cred|private)[a-z0-9_.-]*='`

// listingLimit bounds each end of the listing kept (transport capture).
const listingLimit = 1 << 20

// harvestProcesses teaches the set the secrets a process listing shows
// (mysql -pX, --password=X, a variable named secret in an environment),
// before a step that lists processes runs: its output is then hidden in
// every shape (ps -eo args | base64, | rev), not only where the patterns
// see it in clear. Through the step's transport, so as the step's user.
// An error: the listing did not finish (harvestUnfinished).
func (e *Executor) harvestProcesses(ctx context.Context, tr transport.Transport) error {
	r, err := tr.Run(ctx, transport.Command{Command: processListing, Timeout: harvestTimeout, CaptureLimit: listingLimit})
	e.cfg.Secrets.HarvestListing(r.Stdout)
	if err != nil {
		return fmt.Errorf("process listing: %w", err)
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
