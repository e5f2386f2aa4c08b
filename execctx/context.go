package execctx

import (
	"fmt"
	"sync"
	"time"
)

// Status is how a step ended.
type Status string

// Step statuses, as in the step event.
const (
	StatusOK      Status = "ok"
	StatusError   Status = "error"
	StatusSkipped Status = "skipped" // its condition was false
	StatusDenied  Status = "denied"  // the safety policy refused it
)

// FileEvent is what a step did to a file, as the session remembers it
// (how a step uses a file is a safety.FileOp).
type FileEvent string

// File events.
const (
	FileRead    FileEvent = "read"
	FileWritten FileEvent = "written"
	FileEdited  FileEvent = "edited"
)

// FileAccess is one file a step touched.
type FileAccess struct {
	Op   FileEvent
	Path string
}

// StepRecord is the result of one step, as the runner reports it.
type StepRecord struct {
	Tool        string
	Description string
	Params      map[string]any // the resolved parameters
	Status      Status
	ExitCode    int
	Stdout      string
	Stderr      string
	Output      string // the observation shown to the LLM
	Duration    time.Duration
	// SaveAs is the step's save_output_as, "" for none. It receives Value
	// when that is non-nil (check_condition: a bool), else Stdout.
	SaveAs string
	Value  any
	Files  []FileAccess // files the step read, wrote or edited
}

// DefaultMaxRecordOutput bounds each text field of a record kept in the
// history; variables and `last` keep the full values.
const DefaultMaxRecordOutput = 16 << 10

// Context is the execution context of one run on one host: variables,
// `last`, the step history and the files accessed. It does no I/O. A
// Context is safe for concurrent use; the plan is one per host.
type Context struct {
	// MaxRecordOutput bounds each text field of a stored record (head and
	// tail kept). Set it before the first Record; 0 means the default.
	MaxRecordOutput int

	mu      sync.Mutex
	vars    map[string]any
	history []StepRecord
	files   []FileAccess
	fileSet map[FileAccess]bool
	exposed map[string]Exposure // see SetExposure; nil: every variable shown
	touched []SessionFile       // the session's file index, oldest first (sessionfiles.go)
	task    int                 // BeginTask count
	redact  func(string) string // see SetRedactor
}

// New returns an empty Context.
func New() *Context {
	return &Context{vars: map[string]any{}, fileSet: map[FileAccess]bool{}}
}

// Set stores a variable (a --var value, a plan's vars). The name must pass
// ValidateName; the value is copied and must be built of nil, strings,
// bools, numbers, slices and string-keyed maps.
func (c *Context) Set(name string, v any) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	nv, err := normalize(v)
	if err != nil {
		return fmt.Errorf("set %s: %w", name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vars[name] = nv
	return nil
}

// Get returns a copy of a variable's value; `last` is a map with stdout,
// stderr, exit_code and success once a step has been recorded.
func (c *Context) Get(name string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.vars[name]
	return deepCopy(v), ok
}

// Vars returns a copy of all variables, `last` included.
func (c *Context) Vars() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]any, len(c.vars))
	for k, v := range c.vars {
		out[k] = deepCopy(v)
	}
	return out
}

// Record appends a step's record to the history and updates `last` from it,
// for every status: a skipped or denied step sets last.success to false,
// so a later `last.success` never mistakes a step that did not run for one
// that succeeded. SaveAs is stored only for a step that ran (ok or error);
// after a skipped or denied step the variable keeps any earlier value, and
// a template naming a variable never set fails. Record returns an error
// (and stores no variable) when SaveAs is not a valid name or Value cannot
// be stored; the record and `last` are kept either way.
func (c *Context) Record(r StepRecord) error {
	limit := c.MaxRecordOutput
	if limit <= 0 {
		limit = DefaultMaxRecordOutput
	}
	var saveErr error
	var saved any
	if r.SaveAs != "" && (r.Status == StatusOK || r.Status == StatusError) {
		v := r.Value
		if v == nil {
			v = r.Stdout
		}
		if saveErr = ValidateName(r.SaveAs); saveErr == nil {
			if saved, saveErr = normalize(v); saveErr != nil {
				saveErr = fmt.Errorf("save_output_as %s: %w", r.SaveAs, saveErr)
			}
		}
	}
	last := map[string]any{
		"stdout":    r.Stdout,
		"stderr":    r.Stderr,
		"exit_code": r.ExitCode,
		"success":   r.Status == StatusOK,
	}
	params, err := normalize(r.Params)
	if err != nil {
		params = map[string]any{"error": err.Error()}
	}
	stored := r
	stored.Params, _ = params.(map[string]any)
	stored.Stdout = clipMiddle(r.Stdout, limit)
	stored.Stderr = clipMiddle(r.Stderr, limit)
	stored.Output = clipMiddle(r.Output, limit)
	stored.Value = nil
	stored.Files = append([]FileAccess(nil), r.Files...)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.history = append(c.history, stored)
	c.vars[LastVar] = last
	if r.SaveAs != "" && saveErr == nil && (r.Status == StatusOK || r.Status == StatusError) {
		c.vars[r.SaveAs] = saved
	}
	for _, f := range r.Files {
		c.addFileLocked(f)
	}
	return saveErr
}

// AddFile notes a file access outside a step record.
func (c *Context) AddFile(op FileEvent, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addFileLocked(FileAccess{Op: op, Path: path})
}

func (c *Context) addFileLocked(f FileAccess) {
	if f.Path == "" || c.fileSet[f] {
		return
	}
	c.fileSet[f] = true
	c.files = append(c.files, f)
}

// FilesAccessed returns the files accessed, each (op, path) once, in the
// order first seen.
func (c *Context) FilesAccessed() []FileAccess {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]FileAccess(nil), c.files...)
}

// History returns a copy of the step records, oldest first.
func (c *Context) History() []StepRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]StepRecord, len(c.history))
	copy(out, c.history)
	for i := range out {
		if p, ok := deepCopy(out[i].Params).(map[string]any); ok {
			out[i].Params = p
		}
		out[i].Files = append([]FileAccess(nil), out[i].Files...)
	}
	return out
}

// Len returns the number of recorded steps.
func (c *Context) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.history)
}

// Render replaces the `{{ name }}` references in s (see TemplateVars for
// the rules).
func (c *Context) Render(s string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return render(s, c.vars)
}

// ResolveParams returns a new map with every string in params rendered,
// nested maps and lists included; params is not modified. Values of other
// types are copied as they are. An error names the parameter. The
// top-level parameters named in shell are shell command lines: their
// references become shell-quoted words (renderShell).
func (c *Context) ResolveParams(params map[string]any, shell ...string) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, err := resolve("", params, c.vars, shell...)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// Eval evaluates a condition over the variables (see Evaluate).
func (c *Context) Eval(cond string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return evaluate(cond, c.vars)
}
