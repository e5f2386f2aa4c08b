package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"
)

// Ruleset is a Spec computed against a host's file system once, for every
// command of a session: the rules Landlock is given, and the stamps of the
// directories they depend on (watch.go). A command confined by it
// re-checks only those few directories (Stale), not the Spec's paths.
type Ruleset struct {
	Spec   Spec    `json:"spec"`
	Rules  []Rule  `json:"rules"`
	Stamps []Stamp `json:"stamps"`
}

// Rule grants Rights (Landlock's access bits) on the hierarchy at Path, or
// on the file at Path when !Dir.
type Rule struct {
	Path   string `json:"p"`
	Rights uint64 `json:"r"`
	Dir    bool   `json:"d,omitempty"`
}

// rulesetVersion is the format of an encoded Ruleset.
const rulesetVersion = 2

// Compile computes s against this machine's file system.
func Compile(s Spec) Ruleset {
	rules, stamps := s.compile()
	rs := Ruleset{Spec: s, Rules: make([]Rule, len(rules)), Stamps: stamps}
	for i, r := range rules {
		rs.Rules[i] = Rule{Path: r.path, Rights: r.rights, Dir: r.dir}
	}
	return rs
}

func (rs Ruleset) rules() []rule {
	out := make([]rule, len(rs.Rules))
	for i, r := range rs.Rules {
		out[i] = rule{path: r.Path, rights: r.Rights, dir: r.Dir}
	}
	return out
}

// Encode is rs as the launcher reads it (DecodeRuleset).
func (rs Ruleset) Encode() []byte {
	b, _ := json.Marshal(struct {
		V int `json:"v"`
		Ruleset
	}{rulesetVersion, rs})
	return append(b, '\n')
}

// maxRuleset bounds an encoded Ruleset the launcher reads.
const maxRuleset = 8 << 20

// DecodeRuleset reads what Encode wrote; anything else is an error naming
// what is wrong (paths must be absolute and clean, rights Landlock's).
func DecodeRuleset(b []byte) (Ruleset, error) {
	if len(b) > maxRuleset {
		return Ruleset{}, fmt.Errorf("ruleset of %d bytes: more than %d", len(b), maxRuleset)
	}
	var v struct {
		V int `json:"v"`
		Ruleset
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return Ruleset{}, fmt.Errorf("ruleset: %w", err)
	}
	if v.V != rulesetVersion {
		return Ruleset{}, fmt.Errorf("ruleset version %d, want %d", v.V, rulesetVersion)
	}
	rs := v.Ruleset
	for _, r := range rs.Rules {
		if err := checkPath(r.Path, false); err != nil {
			return Ruleset{}, fmt.Errorf("ruleset: rule: %w", err)
		}
		if r.Rights == 0 || r.Rights&^(readRights|writeRights) != 0 {
			return Ruleset{}, fmt.Errorf("ruleset: rule on %s: rights %#x are not Landlock's", r.Path, r.Rights)
		}
	}
	for _, s := range rs.Stamps {
		if err := checkPath(s.Path, false); err != nil {
			return Ruleset{}, fmt.Errorf("ruleset: stamp: %w", err)
		}
		if s.MTime < -1 {
			return Ruleset{}, fmt.Errorf("ruleset: stamp %s: time %d", s.Path, s.MTime)
		}
	}
	if c := rs.Spec.Caps; c != "" && c != CapsRead && c != CapsNoSystem {
		return Ruleset{}, fmt.Errorf("ruleset: caps %q", c)
	}
	if err := rs.Spec.check(); err != nil {
		return Ruleset{}, fmt.Errorf("ruleset: spec: %w", err)
	}
	return rs, nil
}

// check validates a Spec's paths as ParseArgs does.
func (s Spec) check() error {
	for _, l := range []struct {
		name   string
		paths  []string
		baseOK bool
	}{{"no-write", s.NoWrite, false}, {"no-read", s.NoRead, false}, {"public", s.Public, true},
		{"device", s.Devices, false}, {"writable", s.Writable, false}, {"readable", s.Readable, false}} {
		for _, p := range l.paths {
			if err := checkPath(p, l.baseOK); err != nil {
				return fmt.Errorf("%s: %w", l.name, err)
			}
		}
	}
	return nil
}

// WriteRuleset writes rs to file (mode 0600) atomically: a launcher
// reading it concurrently sees the old rules or the new.
func WriteRuleset(file string, rs Ruleset) error {
	tmp := fmt.Sprintf("%s.%d.%d", file, os.Getpid(), time.Now().UnixNano())
	if err := os.WriteFile(tmp, rs.Encode(), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
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
	b, err := os.ReadFile(file)
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
