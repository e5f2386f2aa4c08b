package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/autoshell/agent/transport"
)

// Tool is one step tool. Run decodes and checks params against Schema; a
// problem the model can fix (a missing or invalid parameter, a pattern not
// found, a file too large, a refused path, a non-zero exit) comes back as an
// Output with IsError set and nil error. A non-nil error means broken
// infrastructure (lost connection, closed transport, cancelled ctx); the
// Output is then meaningless.
//
// Tools neither classify risk nor ask for approval: the runner does that
// before calling Run.
type Tool interface {
	Name() string
	Description() string
	// Schema describes the tool's own parameters. It is shared: do not
	// modify it.
	Schema() *Schema
	Run(ctx context.Context, tr transport.Transport, params json.RawMessage) (Output, error)
}

// Previewer is implemented by tools that change files (write_file,
// edit_file): Preview computes the change and its diff exactly as Run would,
// reads but writes nothing. For --dry-run and approval prompts.
type Previewer interface {
	Preview(ctx context.Context, tr transport.Transport, params json.RawMessage) (Output, error)
}

// Commander is implemented by tools that run a shell command line on the
// target (execute_command and the structured tools): CommandLine returns the
// exact line Run would give the target's /bin/sh -c, for risk
// classification and display. It does no I/O.
type Commander interface {
	CommandLine(params json.RawMessage) (string, error)
}

// Output is a tool's result.
type Output struct {
	// Observation is the string the LLM sees (see Observe).
	Observation string `json:"observation"`
	// Stdout, Stderr and ExitCode are the command's streams and status; for
	// the other tools Stdout is the result text (the content for read_file,
	// a one-line report for writes) and a model-fixable failure is Stderr
	// with ExitCode 1.
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr,omitempty"`
	ExitCode int    `json:"exit_code"`
	// IsError marks a failed step: a model-fixable failure or a non-zero
	// exit.
	IsError bool `json:"is_error,omitempty"`
	// Value is a typed result where one exists: bool for check_condition,
	// *SysStats for sys_monitor. Variables should store it when non-nil, else
	// Stdout.
	Value any `json:"value,omitempty"`
	// FilesChanged lists the files written (or, from Preview, that would be).
	FilesChanged []FileChange `json:"files_changed,omitempty"`
	// Diff is a unified diff of the change for write_file/edit_file,
	// bounded to MaxDiffBytes.
	Diff string `json:"diff,omitempty"`
}

// FileChange describes one file a tool changed, for the undo journal. The
// previous content itself goes to the BeforeChange hook (WithBeforeChange).
type FileChange struct {
	// Path is the resolved absolute path on the target.
	Path string `json:"path"`
	// Existed is false when the tool created the file.
	Existed bool `json:"existed"`
	// OldSHA256 and NewSHA256 are hex digests; OldSHA256 is AbsentSHA when
	// the file did not exist. Pass a Preview's OldSHA256 to
	// WithExpectedContent so that Run applies the change that was approved.
	// upload_file leaves NewSHA256 empty in its Preview (known only once
	// the file is streamed).
	OldSHA256 string `json:"old_sha256,omitempty"`
	NewSHA256 string `json:"new_sha256"`
	// OldMode is the previous permission bits (0 when new).
	OldMode fs.FileMode `json:"old_mode,omitempty"`
	// Size is the new content's size in bytes (0 in an upload's or a
	// download's Preview, known only once the file is streamed).
	Size int64 `json:"size,omitempty"`
	// Local marks the operator's file a download wrote (Path is on this
	// machine, not the target).
	Local bool `json:"local,omitempty"`
}

// String returns the observation.
func (o Output) String() string { return o.Observation }

// Success reports whether the step succeeded.
func (o Output) Success() bool { return !o.IsError }

// ErrorOutput is a model-fixable failure: the observation "[ERROR]: msg".
func ErrorOutput(format string, args ...any) Output {
	msg := fmt.Sprintf(format, args...)
	return Output{Observation: "[ERROR]: " + msg, Stderr: msg, ExitCode: 1, IsError: true}
}

// TextOutput is a success whose result is text (stdout).
func TextOutput(text string) Output {
	return Output{Observation: Observe(text, "", 0), Stdout: text}
}

// CommandOutput turns a command's result into an Output.
func CommandOutput(r transport.Result) Output {
	return Output{
		Observation: observe(r.Stdout, r.Stderr, r.ExitCode),
		Stdout:      r.Stdout,
		Stderr:      r.Stderr,
		ExitCode:    r.ExitCode,
		IsError:     r.ExitCode != 0,
	}
}

// infraError reports whether err from a transport means broken
// infrastructure (a Go error for the caller) rather than something the model
// can fix (a missing file, a permission, a bad directory).
func infraError(ctx context.Context, err error) bool {
	return errors.Is(err, transport.ErrConnection) || errors.Is(err, transport.ErrClosed) || errors.Is(err, transport.ErrBecome) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil
}
