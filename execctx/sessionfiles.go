package execctx

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
)

// More ways a step touches a file: the transfers.
const (
	FileUploaded   FileEvent = "uploaded"   // copied from the operator's machine to the host
	FileDownloaded FileEvent = "downloaded" // copied from the host to the operator's machine
)

// MaxSessionFiles bounds the session's file index; the least recently
// touched entry goes first.
const MaxSessionFiles = 1000

// SessionFile is one file of the session's index: a file on a host that
// steps uploaded, downloaded, read, wrote or edited.
type SessionFile struct {
	Host string
	Path string // absolute, on Host
	// Local is the operator's side of a transfer ("" otherwise).
	Local string
	// Size is the file's size when last touched; -1 when unknown.
	Size int64
	// When is the last touch; First the first.
	When, First time.Time
	// Ops are how it was touched, in the order first seen.
	Ops []FileEvent
	// Task is the task (BeginTask) of the last touch; 0 before any.
	Task int
}

// BeginTask marks the start of a task (a REPL line, an agent -c run): the
// session_files references "these" and "previous" tell the latest task's
// files from earlier ones.
func (c *Context) BeginTask() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.task++
}

// Touch records in the session's file index that f.Path on f.Host was
// touched (f.Ops[0]) at f.When: a file already there gets the new op,
// size and time and becomes the newest; the oldest entry is dropped past
// MaxSessionFiles. An empty path or no op is ignored.
func (c *Context) Touch(f SessionFile) {
	if f.Path == "" || len(f.Ops) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f.Task = c.task
	if f.First.IsZero() {
		f.First = f.When
	}
	i := slices.IndexFunc(c.touched, func(e SessionFile) bool { return e.Host == f.Host && e.Path == f.Path })
	if i >= 0 {
		old := c.touched[i]
		c.touched = slices.Delete(c.touched, i, i+1)
		f.First = old.First
		ops := slices.Clone(old.Ops)
		for _, op := range f.Ops {
			if !slices.Contains(ops, op) {
				ops = append(ops, op)
			}
		}
		f.Ops = ops
		if f.Local == "" {
			f.Local = old.Local
		}
		if f.Size < 0 {
			f.Size = old.Size
		}
	} else {
		f.Ops = slices.Clone(f.Ops)
	}
	c.touched = append(c.touched, f)
	if len(c.touched) > MaxSessionFiles {
		c.touched = slices.Delete(c.touched, 0, len(c.touched)-MaxSessionFiles)
	}
}

// SessionFiles returns the session's file index, newest first.
func (c *Context) SessionFiles() []SessionFile {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]SessionFile, len(c.touched))
	for i, f := range c.touched {
		f.Ops = slices.Clone(f.Ops)
		out[len(out)-1-i] = f
	}
	return out
}

// CurrentTask is the number of the latest BeginTask (0 before any).
func (c *Context) CurrentTask() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.task
}

// fileKinds are file_type words that name several extensions.
var fileKinds = map[string][]string{
	"log":     {".log", ".out", ".err"},
	"config":  {".conf", ".cfg", ".ini", ".yaml", ".yml", ".toml", ".json", ".properties", ".env", ".cnf", ".service"},
	"script":  {".sh", ".bash", ".py", ".pl", ".rb", ".ps1", ".zsh"},
	"archive": {".tar", ".gz", ".tgz", ".zip", ".xz", ".bz2", ".zst"},
	"text":    {".txt", ".md", ".rst"},
	"data":    {".csv", ".tsv", ".json", ".jsonl", ".xml", ".sql"},
}

// FileTypes are the file_type words with a meaning of their own; any other
// is an extension ("yaml", ".pem").
func FileTypes() []string {
	out := make([]string, 0, len(fileKinds))
	for k := range fileKinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MatchesType reports whether p is of file type t: a kind of FileTypes
// (a log also when rotated: app.log.1, app.log.2.gz), else an extension,
// with or without its dot, case-insensitive. "" matches every file.
func MatchesType(p, t string) bool {
	t = strings.ToLower(strings.TrimSpace(t))
	if t == "" {
		return true
	}
	base := strings.ToLower(path.Base(p))
	if exts, ok := fileKinds[t]; ok {
		for _, e := range exts {
			if strings.HasSuffix(base, e) || t == "log" && strings.Contains(base, e+".") {
				return true
			}
		}
		return false
	}
	return strings.HasSuffix(base, "."+strings.TrimPrefix(t, "."))
}

// SessionFilesText is the block of the session's files for a prompt (the
// REPL's notes on earlier tasks), newest last, within budget bytes,
// scrubbed as the summary is; "" when no file was touched.
func (c *Context) SessionFilesText(budget int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scrub(c.sessionFilesBlock(budget, ""))
}

// sessionFilesBlock is the summary's block of the session's files, newest
// last, within budget bytes, without this task's files named in the
// parameters lines named (paramLines; "": none left out).
func (c *Context) sessionFilesBlock(budget int, named string) string {
	const head = "Files of this session (session_files resolves \"this\", \"these\", \"previous\"):\n"
	if len(c.touched) == 0 {
		return ""
	}
	size := len(head) + 40
	var lines []string // newest first
	i := len(c.touched) - 1
	for ; i >= 0; i-- {
		if f := c.touched[i]; f.Task == c.task && namedIn(named, f.Path) {
			continue // this task's step entry names it
		}
		line := clipHead("  "+describeFile(c.touched[i]), varLineMax) + "\n"
		if size+len(line) > budget {
			break
		}
		size += len(line)
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(head)
	if i >= 0 {
		fmt.Fprintf(&b, "  … %d earlier\n", i+1)
	}
	for j := len(lines) - 1; j >= 0; j-- {
		b.WriteString(lines[j])
	}
	return b.String()
}

// describeFile is one line about f: how it was touched, where, its size
// and when.
func describeFile(f SessionFile) string {
	ops := make([]string, len(f.Ops))
	for i, op := range f.Ops {
		ops[i] = string(op)
	}
	s := strings.Join(ops, ", ") + " " + oneLineText(f.Path)
	var extra []string
	if f.Host != "" {
		extra = append(extra, "on "+oneLineText(f.Host))
	}
	if f.Local != "" {
		extra = append(extra, "local copy "+oneLineText(f.Local))
	}
	if f.Size >= 0 {
		extra = append(extra, humanSize(f.Size))
	}
	if !f.When.IsZero() {
		extra = append(extra, f.When.UTC().Format("15:04:05"))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// DescribeFile is describeFile for other packages (the session_files tool).
func DescribeFile(f SessionFile) string { return describeFile(f) }

func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
