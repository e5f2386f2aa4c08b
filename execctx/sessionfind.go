package execctx

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// References to the session's files (session_files' reference).
const (
	RefThis     = "this"     // the newest matching file
	RefThese    = "these"    // the newest Count, or the latest task's
	RefPrevious = "previous" // from an earlier task, or the one before "this"
	RefAll      = "all"      // every match, newest first
)

// MaxFileQueryCount bounds FileQuery.Count.
const MaxFileQueryCount = 200

// FileQuery selects files of the session's index.
type FileQuery struct {
	Reference string // RefThis, RefThese, RefPrevious or RefAll ("": all)
	FileType  string // see MatchesType; "": any
	// Name keeps paths containing it (case-insensitive), or whose base
	// name matches it when it is a glob pattern (*.log); "": any.
	Name string
	// Count is how many; 0: the reference's default.
	Count int
}

// Check reports what is wrong with q, in words for the model.
func (q FileQuery) Check() error {
	switch q.Reference {
	case "", RefThis, RefThese, RefPrevious, RefAll:
	default:
		return fmt.Errorf("reference %q is not one of this, these, previous, all", q.Reference)
	}
	if q.Count < 0 || q.Count > MaxFileQueryCount {
		return fmt.Errorf("count %d is not between 1 and %d", q.Count, MaxFileQueryCount)
	}
	if q.Reference == RefThis && q.Count > 1 {
		return fmt.Errorf("reference this is one file; for %d use these with count %d", q.Count, q.Count)
	}
	if strings.ContainsAny(q.Name, "*?[") {
		if _, err := path.Match(q.Name, ""); err != nil {
			return fmt.Errorf("name pattern %q: %v", q.Name, err)
		}
	}
	if strings.ContainsRune(q.Name, 0) || strings.ContainsRune(q.FileType, 0) {
		return errors.New("a NUL byte in name or file_type")
	}
	return nil
}

func (q FileQuery) matches(f SessionFile) bool {
	if !MatchesType(f.Path, q.FileType) {
		return false
	}
	switch {
	case q.Name == "":
		return true
	case strings.ContainsAny(q.Name, "*?["):
		ok, _ := path.Match(strings.ToLower(q.Name), strings.ToLower(path.Base(f.Path)))
		return ok
	}
	return strings.Contains(strings.ToLower(f.Path), strings.ToLower(q.Name)) ||
		f.Local != "" && strings.Contains(strings.ToLower(f.Local), strings.ToLower(q.Name))
}

// FindFiles answers q from the session's file index, newest first. No
// match is an empty result, not an error; q.Check's error otherwise.
func (c *Context) FindFiles(q FileQuery) ([]SessionFile, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	current := c.CurrentTask()
	var match []SessionFile
	for _, f := range c.SessionFiles() {
		if q.matches(f) {
			match = append(match, f)
		}
	}
	if len(match) == 0 {
		return nil, nil
	}
	take := func(fs []SessionFile, n int) []SessionFile {
		if n > 0 && len(fs) > n {
			return fs[:n]
		}
		return fs
	}
	switch q.Reference {
	case RefThis:
		return match[:1], nil
	case RefThese:
		if q.Count > 0 {
			return take(match, q.Count), nil
		}
		var out []SessionFile
		for _, f := range match {
			if f.Task == match[0].Task {
				out = append(out, f)
			}
		}
		return out, nil
	case RefPrevious:
		n := max(q.Count, 1)
		var earlier []SessionFile
		for _, f := range match {
			if f.Task < current {
				earlier = append(earlier, f)
			}
		}
		if len(earlier) == 0 {
			earlier = match[1:] // one task so far: the ones before "this"
		}
		return take(earlier, n), nil
	}
	return take(match, q.Count), nil
}
