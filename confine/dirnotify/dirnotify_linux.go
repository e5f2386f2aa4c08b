//go:build linux

package dirnotify

import (
	"encoding/binary"
	"errors"
	"path"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Watcher watches directories' entries. It is safe for concurrent use;
// each Watcher has its own event queue, so a queue has one reader.
type Watcher struct {
	mu     sync.Mutex
	fd     int
	dirs   map[string]*dir
	wds    map[int32][]*dir
	buf    []byte
	closed bool
	// mounts is /proc/self/mountinfo, polled for a change of the mount
	// table (-1: not open; no path is then vouched for by its parents);
	// seq orders watches and identities (dir.watched, dir.known).
	mounts int
	seq    uint64
	stated int // identities checked by a stat (tests)
	// calls counts the Changes calls (dir.heldIn); ds is a call's dirs.
	calls uint64
	ds    []*dir
}

// dir is one watched directory: the inode its path named when the watch
// was added, and the names events touched since the last Changes.
type dir struct {
	path     string
	wd       int32
	dev, ino uint64
	names    map[string]bool // name → renamed away (Entry.Away)
	// lost: events of the directory may be missing (the watch ended, the
	// directory was moved or deleted, the queue overflowed).
	lost bool
	// canon: path named the inode through no link when it was opened;
	// watched: when the watch was added; known: when path was last seen
	// naming the inode (opened, or stated) — in Watcher.seq's order.
	canon          bool
	watched, known uint64
	// parent and name split path (parent "" for /); pdir is the parent's
	// dir when last looked up; gone: forgotten (no longer in dirs).
	parent, name string
	pdir         *dir
	gone         bool
	// held: the path still names the inode, as the parents' watches
	// tell, in the call heldIn (Watcher.holds).
	held   bool
	heldIn uint64
}

// mask: an entry made, removed or renamed in the directory; the directory
// itself moved, deleted or unmounted (the watch then ends).
const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// New returns a Watcher with its own inotify instance.
func New() (*Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, &osError{"inotify_init1", err}
	}
	w := &Watcher{fd: fd, dirs: map[string]*dir{}, wds: map[int32][]*dir{}, buf: make([]byte, 64<<10), mounts: -1}
	if m, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		w.mounts = m
	}
	return w, nil
}

type osError struct {
	op  string
	err error
}

func (e *osError) Error() string { return "dirnotify: " + e.op + ": " + e.err.Error() }
func (e *osError) Unwrap() error { return e.err }

// Changes reports, for each of dirs, the names of its entries that may
// have changed since the last call (none: its entries are as they were);
// unknown holds the directories whose changes it cannot vouch for — not
// watched before this call, no longer the directory their path names,
// events lost — which the caller must read. It watches each of dirs from
// this call on.
func (w *Watcher) Changes(dirs []string) (names map[string][]Entry, unknown map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	unknown = map[string]bool{}
	if w.closed {
		for _, p := range dirs {
			unknown[p] = true
		}
		return nil, unknown
	}
	w.drain()
	w.calls++
	ds := w.ds[:0]
	for _, p := range dirs {
		ds = append(ds, w.dirs[p])
	}
	w.ds = ds
	vouch := w.mountsSame()
	if vouch {
		for _, d := range ds {
			if d != nil {
				w.holds(d)
			}
		}
	}
	for i, p := range dirs {
		d := ds[i]
		if d != nil && !d.lost {
			// The path must still name the watched directory: a
			// directory put in its place (or the one the path's links
			// lead to now) has events of its own. Its parents' events
			// tell (holds), else it is stated.
			var st unix.Stat_t
			if vouch && d.heldIn == w.calls && d.held {
				st.Dev, st.Ino = d.dev, d.ino
			} else if w.stated++; unix.Stat(p, &st) == nil && st.Dev == d.dev && st.Ino == d.ino {
				w.seq++
				d.known = w.seq
			}
			if st.Dev == d.dev && st.Ino == d.ino {
				if len(d.names) == 0 {
					continue
				}
				for n, away := range d.names {
					if names == nil {
						names = map[string][]Entry{}
					}
					names[p] = append(names[p], Entry{Name: n, Away: away})
				}
				clear(d.names)
				continue
			}
		}
		unknown[p] = true
		w.rewatch(p, d)
	}
	// A directory no longer asked about is no longer watched: its names
	// would pile up unread.
	if len(w.dirs) > len(dirs) {
		asked := make(map[string]bool, len(dirs))
		for _, p := range dirs {
			asked[p] = true
		}
		for p, d := range w.dirs {
			if !asked[p] {
				w.forget(d)
			}
		}
	}
	return names, unknown
}

// holds reports whether d's path still names the inode watched, as the
// watches of its parents tell, without a stat: the path had no link when
// opened, and each parent up to / is watched, was watched before the path
// was last seen naming its inode (so that no change of the name went
// unseen), had no event naming it since, lost none, and itself holds. A
// name is bound to a directory only in its parent: renamed, removed,
// made again or replaced by a link, the parent's watch names it
// (IN_CREATE, IN_DELETE, IN_MOVED_FROM, IN_MOVED_TO) and the directory's
// own is lost (IN_MOVE_SELF, IN_DELETE_SELF); a mount over it is seen by
// the mount table's poll (mountsSame). Events lost on the way (an
// overflow, a watch ended) make a parent lost, and it holds nothing.
// Called once a call for each asked directory, before their names are
// taken; remembered for the call in d.held.
func (w *Watcher) holds(d *dir) bool {
	if d.heldIn == w.calls {
		return d.held
	}
	d.held, d.heldIn = false, w.calls
	h := false
	if !d.lost && d.canon {
		if d.path == "/" {
			h = true
		} else if d.parent != "" {
			pd := d.pdir
			if pd == nil || pd.gone {
				pd = w.dirs[d.parent]
				d.pdir = pd
			}
			h = pd != nil && !pd.lost && pd.watched < d.known && !pd.hasName(d.name) && w.holds(pd)
		}
	}
	d.held = h
	return h
}

// mountsSame reports whether the mount table is as at the last call (a
// poll of /proc/self/mountinfo: POLLPRI once after each change); false
// when it cannot tell.
func (w *Watcher) mountsSame() bool {
	if w.mounts < 0 {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(w.mounts), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0
}

// hasName reports whether an event named name (made, removed or renamed
// in or out).
func (d *dir) hasName(name string) bool {
	if len(d.names) == 0 {
		return false
	}
	_, ok := d.names[name]
	return ok
}

// Len is how many directories w watches.
func (w *Watcher) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.dirs)
}

// Pending reads the queued events and reports whether any directory has
// news for the next Changes (an entry named, events lost): false means
// Changes would name nothing, unless a directory was replaced at its path
// (which only Changes, stating each, sees).
func (w *Watcher) Pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return true
	}
	w.drain()
	for _, d := range w.dirs {
		if d.lost || len(d.names) > 0 {
			return true
		}
	}
	return false
}

// rewatch drops d's watch (if any) and watches p again, as it is now.
func (w *Watcher) rewatch(p string, d *dir) {
	if d != nil {
		w.forget(d)
	}
	// The inode is the one opened: its identity and its watch agree even
	// when p is replaced meanwhile.
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return
	}
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	wd, err := unix.InotifyAddWatch(w.fd, self, mask)
	if err != nil {
		return
	}
	// The path as opened: the same when it went through no link.
	buf := make([]byte, len(p)+1)
	n, err := unix.Readlink(self, buf)
	w.seq++
	nd := &dir{path: p, wd: int32(wd), dev: st.Dev, ino: st.Ino, names: map[string]bool{},
		canon: err == nil && n == len(p) && string(buf[:n]) == p, watched: w.seq, known: w.seq}
	if parent, name := path.Split(p); name != "" && nd.canon {
		nd.parent, nd.name = path.Clean(parent), name
	}
	w.dirs[p] = nd
	w.wds[nd.wd] = append(w.wds[nd.wd], nd)
}

// forget drops d; the watch itself ends when no other path shares it.
func (w *Watcher) forget(d *dir) {
	delete(w.dirs, d.path)
	d.gone = true
	var rest []*dir
	for _, o := range w.wds[d.wd] {
		if o != d {
			rest = append(rest, o)
		}
	}
	if len(rest) > 0 {
		w.wds[d.wd] = rest
		return
	}
	delete(w.wds, d.wd)
	unix.InotifyRmWatch(w.fd, uint32(d.wd))
}

// drain reads every queued event.
func (w *Watcher) drain() {
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			if err != nil && !errors.Is(err, unix.EAGAIN) {
				w.loseAll()
			}
			return
		}
		w.parse(w.buf[:n])
	}
}

// parse applies a read's events: struct inotify_event is wd (4), mask
// (4), cookie (4), len (4), then len bytes of name padded with NULs.
func (w *Watcher) parse(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		m := binary.NativeEndian.Uint32(b[4:])
		l := int(binary.NativeEndian.Uint32(b[12:]))
		if unix.SizeofInotifyEvent+l > len(b) {
			w.loseAll()
			return
		}
		name := b[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+l]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		b = b[unix.SizeofInotifyEvent+l:]
		if m&unix.IN_Q_OVERFLOW != 0 {
			w.loseAll()
			continue
		}
		for _, d := range w.wds[wd] {
			switch {
			case m&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
				d.lost = true
			case len(name) > 0:
				n := string(name)
				d.names[n] = d.names[n] || m&unix.IN_MOVED_FROM != 0
			}
		}
	}
}

func (w *Watcher) loseAll() {
	for _, d := range w.dirs {
		d.lost = true
	}
}

// Close ends every watch; Changes then reports every directory unknown.
func (w *Watcher) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.mounts >= 0 {
		unix.Close(w.mounts)
	}
	return unix.Close(w.fd)
}
