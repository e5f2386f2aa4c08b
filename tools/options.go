package tools

import (
	"context"
	"time"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/semsearch"
	"github.com/autoshell/agent/transport"
)

// Option configures the tools Default builds.
type Option func(*config)

// BeforeChangeFunc is called by write_file, edit_file and upload_file just
// before a file on the target is replaced, with the file's previous content
// (nil and existed false when it did not exist) — the undo journal's hook;
// and by download_file before the operator's file is written
// (change.Local).
// An error stops the write and is returned as a Go error.
type BeforeChangeFunc func(ctx context.Context, tr transport.Transport, change FileChange, old []byte) error

// ProgressFunc receives transfer progress: done of total bytes (total -1
// when unknown) for upload_file and download_file. It is called from the
// transfer's goroutine, often: keep it cheap.
type ProgressFunc func(tool, path string, done, total int64)

// HomeFunc returns the home directory of the transport's user on its host,
// against which file tools resolve "~" and relative paths.
type HomeFunc func(ctx context.Context, tr transport.Transport) (string, error)

type config struct {
	policy         safety.Policy
	beforeChange   BeforeChangeFunc
	progress       ProgressFunc
	home           HomeFunc
	eval           func(cond string) (bool, error)
	commandTimeout time.Duration
	cpuInterval    time.Duration
	embedder       semsearch.Embedder // semantic_search; nil: BM25
	noEmbedder     string             // why embedder is nil
	searchCache    string             // semantic_search's index cache; "": none
	sessionFiles   SessionFilesFunc   // session_files' index; nil: none
}

// DefaultCommandTimeout bounds execute_command and the structured tools
// when the step gives no timeout.
const DefaultCommandTimeout = 10 * time.Minute

func newConfig(p safety.Policy, opts []Option) *config {
	c := &config{policy: p, commandTimeout: DefaultCommandTimeout, cpuInterval: 250 * time.Millisecond}
	for _, o := range opts {
		o(c)
	}
	if c.home == nil {
		c.home = newHomeCache().home
	}
	return c
}

// WithBeforeChange sets the undo journal's hook.
func WithBeforeChange(f BeforeChangeFunc) Option { return func(c *config) { c.beforeChange = f } }

// WithProgress sets the transfer progress hook (the terminal renderer draws
// a progress bar from it).
func WithProgress(f ProgressFunc) Option { return func(c *config) { c.progress = f } }

// WithHome replaces how the target's home directory is found (by default:
// a HomeDir method on the transport, else "$HOME" from the target's shell,
// cached per host and user).
func WithHome(f HomeFunc) Option { return func(c *config) { c.home = f } }

// WithConditionEvaluator gives check_condition its evaluator (execctx).
func WithConditionEvaluator(f func(cond string) (bool, error)) Option {
	return func(c *config) { c.eval = f }
}

// WithCommandTimeout changes DefaultCommandTimeout; 0 means none.
func WithCommandTimeout(d time.Duration) Option { return func(c *config) { c.commandTimeout = d } }

// WithCPUInterval sets how long sys_monitor samples /proc/stat for cpu.
func WithCPUInterval(d time.Duration) Option { return func(c *config) { c.cpuInterval = d } }

// WithEmbedder gives semantic_search its embeddings model; with e nil it
// ranks lexically (BM25), saying why (whyNot) in its result.
func WithEmbedder(e semsearch.Embedder, whyNot string) Option {
	return func(c *config) { c.embedder, c.noEmbedder = e, whyNot }
}

// WithSessionFiles gives session_files the execution context's index.
func WithSessionFiles(f SessionFilesFunc) Option { return func(c *config) { c.sessionFiles = f } }

// WithSearchCache sets the directory where semantic_search caches its
// indexes (per host and directory); "" caches nothing.
func WithSearchCache(dir string) Option { return func(c *config) { c.searchCache = dir } }
