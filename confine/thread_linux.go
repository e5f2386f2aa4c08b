//go:build linux

package confine

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/autoshell/agent/confine/dirnotify"
	"golang.org/x/sys/unix"
)

// Restrictor confines commands agent starts itself, without a launcher
// process: Do runs a function on a new OS thread confined to the ruleset,
// so that a command started there (fork and exec inherit the thread's
// Landlock domain and no_new_privs) runs confined, and the thread is
// discarded when the function returns — agent's other threads, its audit
// log and journal, are never confined. The ruleset is built once; a
// listed directory that changed makes it compile again (Ruleset.Stale).
// It is safe for concurrent use.
type Restrictor struct {
	mu     sync.Mutex
	rss    []Ruleset
	lists  []*listings // what each ruleset can be patched by (patch.go); nil until compiled here
	fds    []int
	old    []int // the descriptors of earlier compilations, closed by Close
	gen    int   // counts the compilations since NewRestrictor (Ahead, Current)
	closed bool
	// compiles and patches count the rulesets compiled again and patched
	// since NewRestrictor (tests).
	compiles, patches int
	// inPlace counts the patches made to the Landlock ruleset in place.
	inPlace int
	// notify tells the checks which entries of the listed directories
	// changed (nil: they read the directories whose time moved); compile:
	// its news were spent on a refresh that failed, every ruleset is
	// compiled again.
	notify  *dirnotify.Watcher
	compile bool
	// dirs, asked: the directories the stamps name (watchedDirs), as of
	// dirsOf.
	dirs   []string
	asked  map[string]bool
	dirsOf []*listings
	// busy: the directories worth the notifier's watch (notified), and
	// seen, each stamp's time at the last check.
	busy map[string]bool
	seen map[string]int64
	// keepSpare: see KeepSpare; spare is the thread confined for the next
	// command, if any.
	keepSpare bool
	spare     *thread
	spared    int // commands started on a spare (tests)
	// reuse: see Reuse; idle holds the threads that ran a command and may
	// run the next one of their generation; reused counts the commands
	// started on one (tests).
	reuse  bool
	idle   []*thread
	reused int
	// watchAll: see WatchAll; checks counts the checks since.
	watchAll bool
	checks   int
}

// maxIdle bounds the threads kept idle: one for each command run side by
// side that the next ones may follow.
const maxIdle = 4

// NewRestrictor builds each ruleset into a Landlock ruleset; Do confines
// to all of them (stacked: each must allow). It first makes the process
// not dumpable (shieldProcess).
func NewRestrictor(rss ...Ruleset) (*Restrictor, error) {
	return newRestrictor(rss, nil)
}

// NewRestrictors is NewRestrictor for each of sets, built together: a
// path the rules of several name is opened once (the served worker's
// levels, whose first commands come in one batch, name nearly the same
// ~340 paths: an open and a close each, a quarter of the launcher's CPU;
// docs/bench.md).
func NewRestrictors(sets ...[]Ruleset) ([]*Restrictor, error) {
	paths := pathFDs{}
	defer paths.close()
	var rs []*Restrictor
	for _, rss := range sets {
		r, err := newRestrictor(rss, paths)
		if err != nil {
			for _, r := range rs {
				r.Close()
			}
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// newRestrictor is NewRestrictor opening the rules' paths through paths.
func newRestrictor(rss []Ruleset, paths pathFDs) (*Restrictor, error) {
	if err := shieldProcess(); err != nil {
		return nil, err
	}
	r := &Restrictor{rss: slices.Clone(rss), lists: make([]*listings, len(rss))}
	for i := range r.rss {
		r.lists[i], r.rss[i].listed = r.rss[i].listed, nil
	}
	// Told which entries changed, the checks read no listed directory
	// again (/tmp on a busy machine: it holds a protected path and
	// changes between any two commands); without inotify (or past the
	// user's instances) they read them as before.
	if n, err := dirnotify.New(); err == nil {
		r.notify = n
	}
	for _, rs := range rss {
		fd, err := rulesetFDWith(rs, paths)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.fds = append(r.fds, fd)
	}
	return r, nil
}

// shieldProcess makes this process not dumpable, once: a process that
// starts confined commands from its own threads (agent locally, the
// served worker on an SSH host) must not be one they can ptrace. A
// command inherits the Landlock domain of the thread that forked it, and
// Landlock lets a domain ptrace its own: that thread lives a moment
// after the fork (locally, until the command ends), and
// /proc/PID/task/TID/mem, process_vm_writev or PTRACE_ATTACH on it would
// reach the whole, unconfined process (TestRestrictorShieldsItsProcess).
// Not dumpable, every such access needs CAP_SYS_PTRACE, which no
// confined level keeps and a user other than root never has.
var shieldProcess = sync.OnceValue(func() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return wrap("confine: make the process not dumpable", err)
	}
	return nil
})

// Do runs fn on a new OS thread confined to the ruleset; fn must not
// start goroutines that expect to be unconfined on that thread (none can:
// the goroutine is locked to it) and should only start a process and
// wait for it. An error means fn did not run.
func (r *Restrictor) Do(fn func()) error {
	_, err := r.do(true, func() bool { fn(); return false })
	return err
}

// DoThen is Do for a caller that can tell whether the command it started
// left anything behind: when fn returns true (the command and everything
// it started have ended) and the Restrictor reuses its threads (Reuse),
// the thread waits for the next command of the same rules instead of
// ending.
func (r *Restrictor) DoThen(fn func() (ended bool)) error {
	_, err := r.do(true, fn)
	return err
}

// Ahead is Do without the staleness check: fn runs confined to the rules
// as they were last compiled, whose generation it returns. It is for a
// process started ahead of its command, which may run the command only
// if Current(gen) says those rules still hold; checking here would
// compile again, for a command that may never come, rules the last
// command made stale.
func (r *Restrictor) Ahead(fn func()) (gen int, err error) {
	return r.do(false, func() bool { fn(); return false })
}

func (r *Restrictor) do(check bool, fn func() bool) (int, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return 0, errors.New("confine: restrictor closed")
	}
	if check {
		if _, err := r.refresh(); err != nil {
			r.mu.Unlock()
			return 0, err
		}
	}
	gen := r.gen
	t := r.takeIdle(gen)
	waited := t != nil // an idle thread's confinement held
	if t == nil {
		t = r.spare
		r.spare = nil
		if t != nil && t.gen != gen {
			t.retire() // confined to rules since changed
			t = nil
		}
		if t != nil {
			r.spared++
		}
	}
	spared := t != nil
	if t == nil {
		t = r.confined()
	}
	r.mu.Unlock()
	if !waited {
		if err := <-t.ready; err != nil {
			if !spared {
				return 0, err
			}
			// The spare's confinement failed: a thread of its own, once.
			r.mu.Lock()
			t = r.confined()
			r.mu.Unlock()
			if err := <-t.ready; err != nil {
				return 0, err
			}
		}
	}
	t.fn <- fn
	r.mu.Lock()
	if r.keepSpare && !r.closed && r.spare == nil && r.spareNeeded(t) {
		// The next command's thread is confined while this one runs
		// (one spare: a Do running beside this one may have left it).
		r.spare = r.confined()
	}
	r.mu.Unlock()
	if kept := <-t.done; kept {
		r.mu.Lock()
		if r.closed || len(r.idle) >= maxIdle {
			t.retire()
		} else {
			r.idle = append(r.idle, t)
		}
		r.mu.Unlock()
	}
	return gen, nil
}

// takeIdle returns an idle thread confined to the rules of generation gen,
// if any, and ends those confined to older ones. r.mu is held.
func (r *Restrictor) takeIdle(gen int) *thread {
	var t *thread
	keep := r.idle[:0]
	for _, i := range r.idle {
		switch {
		case i.gen != gen:
			i.retire()
		case t == nil:
			t = i
		default:
			keep = append(keep, i)
		}
	}
	clear(r.idle[len(keep):])
	r.idle = keep
	if t != nil {
		r.reused++
	}
	return t
}

// spareNeeded: a thread confined ahead would serve the next command —
// which with Reuse follows on t unless t's rules have moved since (its
// own command left something, or events tell of a change, are seen
// only after; the spare is then made by the next command). r.mu is held.
func (r *Restrictor) spareNeeded(t *thread) bool {
	if !r.reuse {
		return true
	}
	if r.notify == nil || !r.notify.Pending() {
		return false
	}
	if _, err := r.refresh(); err != nil {
		return false // the next Do says why
	}
	return r.gen != t.gen
}

// WatchAll has the notifier watch every directory the rules' stamps name,
// not only the busy ones (notified), from the Restrictor's second check
// on: for one that checks before many commands (agent locally, a check
// before each step), where the watches are paid once and a check then
// stats no directory — its parents' watches vouch that its path still
// names it (dirnotify) — against one stat a directory at every check
// (~860 a step for a home of a few hundred directories: most of a local
// step's own cost).
func (r *Restrictor) WatchAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watchAll = true
}

// Reuse has a thread that ran a command and was told that command left
// nothing behind (DoThen) run the next command confined to the same rules
// (the same generation), instead of ending and a new thread being
// confined for it (capabilities, Landlock's domain, the seccomp filter:
// most of a local step's own cost). Confinement only narrows, and the
// rules are the same: the command runs as confined as on a new thread.
// What a new thread gave besides is a domain of the command's own: a
// process of the earlier command still running could signal the thread
// (Landlock lets a domain signal its own) — hence only after a command
// whose process group is gone. A process that left its group (setsid)
// and lives on can signal the thread until it ends, as any command can
// the thread that forked it while it runs; agent's memory stays out of
// its reach (shieldProcess). The thread ends when the rules move or the
// Restrictor is closed.
func (r *Restrictor) Reuse() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reuse = true
}

// KeepSpare has the Restrictor confine the next command's thread while a
// command runs (its rules as they are then): a Do whose rules have not
// changed since starts its command on that thread at once, the thread's
// confinement (capabilities, Landlock's domain, the seccomp filter) off
// its way. The spare thread is as any: confined before it runs one
// function, ended after; one confined to rules since changed is ended
// unused.
func (r *Restrictor) KeepSpare() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keepSpare = true
}

// thread is a goroutine locked to a new thread confined to the rules of
// generation gen: ready says whether the confinement held; then it runs
// the functions sent on fn, one at a time, saying after each on done
// whether it waits for another (the function returned true and the
// Restrictor reuses threads: Reuse); else, or when fn is closed, it ends
// with its thread.
type thread struct {
	gen   int
	reuse bool
	ready chan error
	fn    chan func() bool
	done  chan bool
}

// retire ends t unused.
func (t *thread) retire() { close(t.fn) }

// confined starts a thread confined to the rules as they are. r.mu is
// held.
func (r *Restrictor) confined() *thread {
	t := &thread{gen: r.gen, reuse: r.reuse, ready: make(chan error, 1), fn: make(chan func() bool, 1), done: make(chan bool, 1)}
	fds, rss := slices.Clone(r.fds), slices.Clone(r.rss)
	keep, limited := keepOf(r.rss)
	go offMain(func() {
		// Never unlocked: the runtime ends the thread with this goroutine,
		// so no other goroutine ever runs confined.
		if limited {
			if err := dropCaps(keep); err != nil {
				t.ready <- err
				return
			}
		}
		for _, fd := range fds {
			if err := restrictThread(fd); err != nil {
				t.ready <- err
				return
			}
		}
		// Like the Landlock domain, the filter stays with this thread,
		// which ends with the goroutine: no unconfined work runs on it
		// again.
		if err := applySyscalls(rss); err != nil {
			t.ready <- err
			return
		}
		t.ready <- nil
		for fn := range t.fn {
			kept := fn() && t.reuse
			t.done <- kept
			if !kept {
				return
			}
		}
	})
	return t
}

// offMain runs f on the calling goroutine locked to a thread that is not
// the process's main thread, and leaves the goroutine locked there: f
// may confine the thread, which then ends with the goroutine. Go cannot
// end the main thread: it would keep it, confined, for the process's
// life — the thread-group leader that /proc/PID and signals to the
// process address, sharing the first confined command's Landlock domain
// (which lets a domain signal and ptrace its own). On the main thread it
// holds that thread while another goroutine, which must then run on
// another, does it, and gives the main thread back untouched.
func offMain(f func()) {
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		f()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		offMain(f)
	}()
	<-done
	runtime.UnlockOSThread()
}

// Current reports whether the rules of generation gen (Ahead) still
// hold: false when they were compiled again since, or a watched
// directory's entries changed (they are compiled again now, for the next
// Do).
func (r *Restrictor) Current(gen int) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.refresh()
	return err == nil && r.gen == gen, err
}

// Rules returns the rulesets as last compiled and their generation (it
// moves each time a stale one is compiled again): the served worker
// writes them back to their files, so that the next session starts from
// fresh rules.
func (r *Restrictor) Rules() (gen int, rss []Ruleset) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen, slices.Clone(r.rss)
}

// Reused counts the commands started on a thread that had run one
// before (Reuse).
func (r *Restrictor) Reused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reused
}

// Compiles counts the rulesets compiled again since NewRestrictor (a
// patch is not counted).
func (r *Restrictor) Compiles() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.compiles
}

// refresh compiles again the rulesets gone stale; changed reports that
// one did. r.mu is held.
func (r *Restrictor) refresh() (changed bool, err error) {
	if r.closed {
		return false, errors.New("confine: restrictor closed")
	}
	known := r.notified()
	for i, rs := range r.rss {
		var l *listings
		if r.lists[i] != nil && !r.compile {
			prs, pl, dl, patched, ok := patch(rs, r.lists[i], known)
			if ok && !patched {
				r.rss[i], r.lists[i] = prs, pl // the stamps renewed, or nothing
				continue
			}
			if ok {
				rs, l = prs, pl
				r.patches++
				// Granting alone (or dropping rules of files unlinked)
				// changes the Landlock ruleset in place: building it
				// again is a system call or three a rule, hundreds of
				// rules when /tmp is listed.
				if !dl.rebuild && addRules(r.fds[i], dl.added) == nil {
					// Only a grant moves the generation: a thread
					// confined before lacks it (the served worker's shell
					// started ahead is not used), while the rules of
					// files unlinked since grant nothing.
					r.rss[i], r.lists[i] = rs, l
					changed = changed || len(dl.added) > 0
					r.inPlace++
					continue
				}
			}
		}
		if l == nil && r.compile {
			rs, l = compileListed(rs.Spec)
			r.compiles++
		}
		if l == nil {
			stale, renewed := rs.checkTold(known)
			if renewed {
				r.rss[i] = rs // the same rules; the stamps spare the next check a reading
			}
			if !stale {
				continue
			}
			rs, l = compileListed(rs.Spec)
			r.compiles++
		}
		fd, err := rulesetFD(rs)
		if err != nil {
			// The notifier's news are spent: compile every ruleset
			// again next time rather than trust rules they did not reach.
			r.compile = r.notify != nil
			return true, err
		}
		r.old = append(r.old, r.fds[i])
		r.rss[i], r.lists[i], r.fds[i], changed = rs, l, fd, true
	}
	r.compile = false
	if changed {
		r.gen++
	}
	return changed, nil
}

// notified asks the notifier about the busy ones of the directories the
// rulesets watch (their stamps: the listed ones and those read for
// anything else): nil when there is no notifier or none is busy. A
// directory it was not asked about is not vouched for: the check asks
// its time (Stamp.check), as without a notifier. r.mu is held.
//
// Busy is a directory whose stamp is Hot, or whose time moved since an
// earlier check: one a check must read (a Hot stamp's entries are read
// at every check until it settles) or which changes between commands.
// Only those are watched. A watch costs four system calls (open, fstat,
// inotify_add_watch, close) against a check's one stat, and a check
// still stats each watched directory (its identity): for a directory
// that does not change it only costs. A host's rules watch ~450
// directories a level, a handful of them busy; the watches were a
// quarter of the served worker's CPU in a warm fan-out host's session
// of three commands (docs/bench.md).
func (r *Restrictor) notified() func(dir string) ([]dirnotify.Entry, bool) {
	if r.notify == nil {
		return nil
	}
	all, every := r.watchedDirs()
	if r.watchAll {
		// From the second check on (the first may be a run's only one):
		// every directory is watched, and vouched for by its parents'
		// watches alone (dirnotify's held): no system call a directory.
		if r.checks++; r.checks > 1 && len(all) > 0 {
			names, unknown := r.notify.Changes(all)
			return func(d string) ([]dirnotify.Entry, bool) {
				if !every[d] || len(unknown) > 0 && unknown[d] {
					return nil, false
				}
				if names == nil {
					return nil, true
				}
				return names[d], true
			}
		}
	}
	if r.busy == nil {
		r.busy, r.seen = map[string]bool{}, map[string]int64{}
	}
	for _, rs := range r.rss {
		for _, st := range rs.Stamps {
			if t, ok := r.seen[st.Path]; st.Hot || ok && t != st.MTime {
				r.busy[st.Path] = true
			}
			r.seen[st.Path] = st.MTime
		}
	}
	if len(r.busy) == 0 {
		return nil
	}
	dirs := make([]string, 0, len(r.busy))
	asked := make(map[string]bool, len(r.busy))
	for _, d := range all {
		if r.busy[d] {
			dirs = append(dirs, d)
			asked[d] = true
		}
	}
	names, unknown := r.notify.Changes(dirs) // none: it stops watching those no stamp names now
	if len(dirs) == 0 {
		return nil
	}
	return func(d string) ([]dirnotify.Entry, bool) {
		if !asked[d] || unknown[d] {
			return nil, false
		}
		return names[d], true
	}
}

// watchedDirs is the directories the rulesets watch (their stamps), each
// once, and their set: kept while the listings are the same (a check
// finding nothing new leaves them so; a compilation, which alone changes
// the stamps' directories, makes new ones — also for rules read from a
// file, which have none until compiled here), since a home holds
// hundreds (a test's scratch tree of keys and .aws directories: 365) and
// finding each once among the others was a quarter of a check. r.mu is
// held.
func (r *Restrictor) watchedDirs() ([]string, map[string]bool) {
	if r.dirsOf != nil && slices.Equal(r.dirsOf, r.lists) {
		return r.dirs, r.asked
	}
	asked := map[string]bool{}
	dirs := []string{}
	for _, rs := range r.rss {
		for _, st := range rs.Stamps {
			if !asked[st.Path] {
				asked[st.Path] = true
				dirs = append(dirs, st.Path)
			}
		}
	}
	r.dirs, r.asked, r.dirsOf = dirs, asked, slices.Clone(r.lists)
	return dirs, asked
}

// Close releases the ruleset; Do fails afterwards.
func (r *Restrictor) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, fd := range append(r.old, r.fds...) {
		unix.Close(fd)
	}
	if r.notify != nil {
		r.notify.Close()
	}
	if r.spare != nil {
		r.spare.retire()
		r.spare = nil
	}
	for _, t := range r.idle {
		t.retire()
	}
	r.idle = nil
	r.fds, r.old, r.closed = nil, nil, true
	return nil
}

// GroupGone reports whether process group pgid has no process left: a
// command whose group is gone may be followed on its thread (DoThen).
// Any answer but "no such group" (one left, or a process of that ID now
// one agent may not signal) is false.
func GroupGone(pgid int) bool {
	return pgid > 0 && unix.Kill(-pgid, 0) == unix.ESRCH
}

// threadID is the calling thread's ID.
func threadID() int { return unix.Gettid() }

// threadGone waits until thread tid of this process has ended, up to
// limit; false if it has not.
func threadGone(tid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for wait := 10 * time.Microsecond; ; wait = min(2*wait, time.Millisecond) {
		if err := unix.Tgkill(unix.Getpid(), tid, 0); err == unix.ESRCH {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
}
