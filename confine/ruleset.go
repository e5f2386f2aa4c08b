package confine

import (
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// Ruleset is a Spec computed against a host's file system once, for every
// command of a session: the rules Landlock is given, and the stamps of the
// directories they depend on (watch.go). A command confined by it
// re-checks only those few directories (Stale), not the Spec's paths.
type Ruleset struct {
	Spec   Spec
	Rules  []Rule
	Stamps []Stamp
	// listed: what Compile listed for cover alone (patch.go), which a
	// Restrictor made from this Ruleset starts from, so that its checks
	// patch (and are told by its notifier) from the first command; not
	// encoded.
	listed *listings
}

// Rule grants Rights (Landlock's access bits) on the hierarchy at Path, or
// on the file at Path when !Dir.
type Rule struct {
	Path   string
	Rights uint64
	Dir    bool
}

// rulesetVersion is the format of an encoded Ruleset (encoding.go).
const rulesetVersion = 6

// Compile computes s against this machine's file system.
func Compile(s Spec) Ruleset {
	rs, l := compileListed(s)
	rs.listed = l
	return rs
}

func (rs Ruleset) rules() []rule {
	out := make([]rule, len(rs.Rules))
	for i, r := range rs.Rules {
		out[i] = rule{path: r.Path, rights: r.Rights, dir: r.Dir}
	}
	return out
}

// WriteRuleset writes rs to file (mode 0600) atomically: a launcher
// reading it concurrently sees the old rules or the new. Written as root
// into another user's directory, it is that user's (ownLikeDir).
func WriteRuleset(file string, rs Ruleset) error {
	tmp := file + "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := os.WriteFile(tmp, rs.Encode(), 0o600); err != nil {
		return err
	}
	ownLikeDir(tmp)
	if err := rename(tmp, file); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ReadRuleset reads a file WriteRuleset wrote.
func ReadRuleset(file string) (Ruleset, error) {
	if !path.IsAbs(file) {
		return Ruleset{}, errors.New("ruleset file " + file + " is not absolute")
	}
	f, err := os.Open(file)
	if err != nil {
		return Ruleset{}, err
	}
	defer f.Close()
	// Read to one byte past the bound (os.ReadFile stats the file, which
	// the launcher does not link: fsys_linux.go).
	b, err := io.ReadAll(io.LimitReader(f, maxRuleset+1))
	if err != nil {
		return Ruleset{}, err
	}
	return DecodeRuleset(b)
}

// Allows reports whether the rules let a command read (or, with write,
// write or create) the file at p, an absolute path with its symbolic
// links resolved: as Landlock decides, some rule on p or on a directory
// above it grants the right. The file tools, which run in agent's process,
// check their paths with it (--sandbox).
func (rs Ruleset) Allows(p string, write bool) bool {
	want := uint64(accessReadFile)
	if write {
		want = accessWriteFile
	}
	return rs.grants(p, want)
}

// AllowsList reports whether the rules let a command list the directory
// at p (links resolved), as `ls` does: a directory that holds a hidden
// secret may be listed, though not read whole.
func (rs Ruleset) AllowsList(p string) bool { return rs.grants(p, accessReadDir) }

func (rs Ruleset) grants(p string, want uint64) bool {
	p = path.Clean(p)
	for _, r := range rs.Rules {
		if r.Rights&want == 0 {
			continue
		}
		if r.Path == p || r.Dir && (r.Path == "/" || strings.HasPrefix(p, r.Path+"/")) {
			return true
		}
	}
	return false
}
