package executor

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/autoshell/agent/transport"
)

// A step that shows a repository's history (`git show HEAD~1:.env`,
// `git log -p`, `git diff HEAD~3`, `git stash show -p`) shows files the
// work tree may no longer hold: a secret committed, then removed.
// harvestGit reads them first, in one command on the host through the
// step's transport: of the last gitCommits commits of every ref and of
// the reflog, each file a commit changed, as that commit and its parent
// have it, at most treeFiles files of at most treeFileMax bytes, printed
// as treeScript prints a tree's (splitTreeFiles reads both).

// gitCommits is how many commits back harvestGit reads.
const gitCommits = 64

// showsHistory matches a git command that prints what a commit holds.
var showsHistory = regexp.MustCompile(`(?:^|[\s|;&(])git(?:\s+(?:-C|-c|--git-dir|--work-tree)(?:\s+|=)\S+|\s+--no-pager|\s+-P)*\s+` +
	`(?:show|log|diff|cat-file|grep|blame|archive|stash|reflog|whatchanged|format-patch|bundle|annotate|diff-tree|rev-list)(?:$|\s)`)

// gitDirArg matches git's -C DIR.
var gitDirArg = regexp.MustCompile(`(?:^|\s)git\s+(?:\S+\s+)*?-C\s*(?:'([^']*)'|"([^"$` + "`" + `\\]*)"|([^\s'"$` + "`" + `\\;|&()]+))`)

// maxGitRepos bounds the directories tried as repositories.
const maxGitRepos = 3

// gitScript prints the history's files of the repositories dirs (shell
// words, treeRoot's), the first that is a repository holding each file
// version once. Git is run without the repository's hooks, fsmonitor or
// pager.
func gitScript(dirs []string) string {
	var b strings.Builder
	b.WriteString("k=0; seen=; for d in " + strings.Join(dirs, " ") + "; do cd \"$d\" 2>/dev/null || continue; " +
		"g() { git -c core.fsmonitor=false -c core.hooksPath=/dev/null --no-pager \"$@\"; }; " +
		"g rev-parse --git-dir >/dev/null 2>&1 || continue; " +
		"g log --all --reflog -n " + strconv.Itoa(gitCommits) + " --format=C%H --name-only --no-renames -m 2>/dev/null | " +
		`awk '/^C/ {c = substr($0, 2); next} NF {print c "\t" $0}' | ` +
		"{ while IFS='\t' read -r c f; do for r in \"$c\" \"$c^\"; do " +
		"[ $k -lt " + strconv.Itoa(treeFiles) + " ] || break 2; " +
		"o=$(g rev-parse -q --verify \"$r:$f\" 2>/dev/null) || continue; " +
		"case \"$seen\" in *\" $o\"*) continue;; esac; seen=\"$seen $o\"; " +
		"n=$(g cat-file -s \"$o\" 2>/dev/null) || continue; [ \"$n\" -le " + strconv.Itoa(treeFileMax) + " ] || continue; " +
		"k=$((k+1)); printf '\\n%s %s\\n' \"$n\" \"$f\"; g cat-file blob \"$o\"; " +
		"done; done; }; break; done")
	return b.String()
}

// harvestGit teaches the set the secrets of the history of the
// repository a command shows: its -C directory, else a directory it
// names (dirs), else where it starts (wd).
// An error: the history's read did not finish (harvestUnfinished).
func (e *Executor) harvestGit(ctx context.Context, tr transport.Transport, command string, abs func(string) (string, error), dirs []string, wd string) error {
	var cands []string
	for _, m := range gitDirArg.FindAllStringSubmatch(command, maxGitRepos) {
		if d, err := abs(m[1] + m[2] + m[3]); err == nil {
			cands = append(cands, d)
		}
	}
	cands = append(cands, dirs...)
	cands = append(cands, wd)
	var words []string
	seen := map[string]bool{}
	for _, d := range cands {
		if d == "" || seen[d] || len(words) == maxGitRepos {
			continue
		}
		seen[d] = true
		words = append(words, treeRoot(d))
	}
	res, err := tr.Run(ctx, transport.Command{Command: gitScript(words), Timeout: harvestTimeout, CaptureLimit: treeCapture})
	for _, f := range splitTreeFiles(res.Stdout) {
		e.cfg.Secrets.HarvestData(f.path, []byte(f.data))
	}
	if err != nil {
		return fmt.Errorf("git history: %w", err)
	}
	return nil
}
