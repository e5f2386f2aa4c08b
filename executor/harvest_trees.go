package executor

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/autoshell/agent/transport"
)

// A step that reads files it names by a glob (`cat ~/app/*.json`,
// `tail -n +1 conf/*`) or a whole tree (`grep -r . ~/app`, `find ~/app
// -name '*.yml' -exec cat {} +`, `find … | xargs cat`, `tar c ~/app`)
// reads files no word of it names: harvestTrees reads them first, in one
// command on the host through the step's transport (so as the step's
// user, under its confinement): the regular files of at most
// treeFileMax bytes the globs match and the trees hold (to a depth of
// treeDepth; .git and node_modules aside), settings-like names first, at
// most treeFiles of them, each printed after a "\n<size> <path>\n"
// header.

const (
	treeFiles   = 64
	treeFileMax = 64 << 10
	treeDepth   = 4
	// treeCapture bounds the listing's capture: every file at its largest
	treeCapture = treeFiles*(treeFileMax+4096) + 4096
)

// treeFirst are the names read first: where settings and keys are.
const treeFirst = `\( -name '*.json' -o -name '*.y*ml' -o -name '*.toml' -o -name '*.ini' -o -name '*.conf' -o -name '*.cfg' ` +
	`-o -name '*.cnf' -o -name '*env*' -o -name '*.properties' -o -name '*.xml' -o -name '*.sql' -o -name '*.gz' -o -name '*rc' ` +
	`-o -name '*.pem' -o -name '*.key' -o -name '*cred*' -o -name '*secret*' -o -name '*pass*' -o -name '*config*' -o -name '*history' ` +
	`-o -name '*.php' -o -name '*token*' \)`

// treeScript is the host command that prints the files of roots (shell
// words: quoted paths, globs with their pattern characters bare), an
// equal share of treeFiles from each. Where find has -printf (GNU), it
// gives each file's size with its name and a file costs one process
// (head); elsewhere (BusyBox) three (a subshell, wc, head): 64 files
// were ~200 processes before the step.
func treeScript(roots []string) string {
	per := strconv.Itoa(max(treeFiles/len(roots), 1))
	walk := func(root, filter, action string) string {
		return "find -H " + root + " -maxdepth " + strconv.Itoa(treeDepth) + " \\( -name .git -o -name node_modules -o -path /proc -o -path /sys -o -path /dev \\) -prune -o " +
			filter + "-type f -size -" + strconv.Itoa(treeFileMax/1024+1) + "k " + action + " 2>/dev/null"
	}
	list := func(action string) string {
		var b strings.Builder
		b.WriteString("{ ")
		for _, r := range roots {
			b.WriteString("{ " + walk(r, treeFirst+" ", action) + "; " + walk(r, "", action) + "; } | awk '!s[$0]++' | head -n " + per + "; ")
		}
		b.WriteString("} | awk '!s[$0]++'")
		return b.String()
	}
	max := strconv.Itoa(treeFileMax)
	return "if find / -maxdepth 0 -printf '' >/dev/null 2>&1; then " +
		list(`-printf '%s %p\n'`) +
		` | while IFS= read -r l; do n=${l%% *} f=${l#* }; [ "$n" -le ` + max + ` ] || continue; printf '\n%s %s\n' "$n" "$f"; head -c "$n" -- "$f"; done; else ` +
		list("-print") +
		` | while IFS= read -r f; do n=$(wc -c < "$f" 2>/dev/null) || continue; [ "$n" -le ` + max +
		` ] || continue; printf '\n%s %s\n' "$n" "$f"; head -c "$n" "$f"; done; fi`
}

// treeRoot writes an absolute path, a glob's pattern characters (* ? [ ])
// left bare, as one shell word: every other byte escaped.
func treeRoot(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case strings.IndexByte("*?[]", c) >= 0:
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`'\n'`) // never matched: a path with a newline is not read
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// harvestTrees teaches the set the secrets of the files roots (absolute
// paths, globs among them) hold.
// An error: the trees' read did not finish (harvestUnfinished).
func (e *Executor) harvestTrees(ctx context.Context, tr transport.Transport, roots []string) error {
	words := make([]string, 0, len(roots))
	for _, r := range roots {
		if r == "/" || strings.HasPrefix(r, "/proc") || strings.HasPrefix(r, "/sys") || strings.HasPrefix(r, "/dev") {
			continue
		}
		words = append(words, treeRoot(r))
	}
	if len(words) == 0 {
		return nil
	}
	res, err := tr.Run(ctx, transport.Command{Command: treeScript(words), Timeout: harvestTimeout, CaptureLimit: treeCapture})
	for _, f := range splitTreeFiles(res.Stdout) {
		e.cfg.Secrets.HarvestData(f.path, []byte(f.data))
	}
	if err != nil {
		return fmt.Errorf("files of %s: %w", strings.Join(roots, ", "), err)
	}
	return nil
}

type treeFile struct{ path, data string }

// splitTreeFiles reads treeScript's output: "\n<size> <path>\n" then
// size bytes, again and again; it stops where that does not hold (a file
// that shrank while it was read).
func splitTreeFiles(out string) []treeFile {
	var files []treeFile
	for len(out) > 0 {
		if out[0] != '\n' {
			break
		}
		head, rest, ok := strings.Cut(out[1:], "\n")
		if !ok {
			break
		}
		size, name, ok := strings.Cut(head, " ")
		n, err := strconv.Atoi(size)
		if !ok || err != nil || n < 0 || n > len(rest) {
			break
		}
		files = append(files, treeFile{name, rest[:n]})
		out = rest[n:]
	}
	return files
}

// readsTrees matches a command that may read a directory's files when it
// names the directory: a recursive option (grep -rh, cp -R,
// --recursive), an archiver, find and xargs, a script's interpreter
// (os.walk, File.find).
var readsTrees = regexp.MustCompile("(?:^|\\s)(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive|--dereference-recursive)(?:\\s|$)|" +
	"(?:^|[\\s|;&(`/])(?:tar|zip|7z|cpio|rsync|find|xargs|rg|ag|ack|zgrep|bsdtar|pax|python[0-9.]*|perl|ruby|node|php)(?:$|[\\s|;&)`])")
