//go:build linux

package confine

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"path"
	"slices"

	"golang.org/x/sys/unix"
)

// The file system as the rules read it, in system calls: os's Stat,
// Lstat and ReadDir make an fs.FileInfo, whose ModTime's time.Time links
// time's formatting and time zones into the launcher (~100 KB;
// docs/decisions.md, "The launcher kept small"). TestFsysAsOS compares
// them with os's.

// lstatType is p's type (fs.FileMode's type bits), its last link not
// followed.
func lstatType(p string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return 0, &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	return modeType(st.Mode), nil
}

// statType is p's type, links followed.
func statType(p string) (fs.FileMode, error) {
	_, t, err := statMode(p)
	return t, err
}

// statMode is p's permission bits and type, links followed.
func statMode(p string) (perm uint32, typ fs.FileMode, err error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, 0, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	return st.Mode & 0o7777, modeType(st.Mode), nil
}

// mtime is p's modification time in Unix nanoseconds, links followed; -1
// when it cannot be stat'ed.
func mtime(p string) int64 {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return -1
	}
	return int64(st.Mtim.Sec)*1e9 + int64(st.Mtim.Nsec)
}

// modeType is os's reading of a stat mode's type.
func modeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	}
	return 0
}

// dirEntry is a directory's entry: its name and type.
type dirEntry struct {
	name string
	typ  fs.FileMode
}

func (e dirEntry) Name() string      { return e.name }
func (e dirEntry) Type() fs.FileMode { return e.typ }

// readDir is d's entries sorted by name, as os.ReadDir has them: "." and
// ".." left out, a type the directory does not give looked up (an entry
// gone by then left out).
func readDir(d string) ([]dirEntry, error) {
	fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d, Err: err}
	}
	defer unix.Close(fd)
	// Sorted as strings, "NAME\x00T" (T: the type's index in entryTypes),
	// which sort as their names: no SortFunc instantiated for dirEntry
	// (~9 KB more of the launcher).
	var keys []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: d, Err: err}
		}
		if n <= 0 {
			break
		}
		ents, err := parseDirents(buf[:n])
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: d, Err: err}
		}
		for _, e := range ents {
			if e.typ == typeUnknown {
				t, err := lstatType(path.Join(d, e.name))
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return nil, err
				}
				e.typ = t
			}
			keys = append(keys, e.name+"\x00"+string(rune('0'+slices.Index(entryTypes, e.typ))))
		}
	}
	slices.Sort(keys)
	out := make([]dirEntry, len(keys))
	for i, k := range keys {
		out[i] = dirEntry{name: k[:len(k)-2], typ: entryTypes[k[len(k)-1]-'0']}
	}
	return out, nil
}

// entryTypes are the types an entry may have (modeType's).
var entryTypes = []fs.FileMode{0, fs.ModeDir, fs.ModeSymlink, fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice, fs.ModeNamedPipe, fs.ModeSocket}

// typeUnknown marks an entry whose type the directory does not give.
const typeUnknown = ^fs.FileMode(0)

// direntHeader is the size of struct linux_dirent64 before the name:
// d_ino (8), d_off (8), d_reclen (2), d_type (1).
const direntHeader = 19

// parseDirents reads getdents64's records, in the machine's byte order:
// the entries but "." and "..", typeUnknown where d_type is DT_UNKNOWN
// (or one this code does not know). A record that does not fit is an
// error.
func parseDirents(b []byte) ([]dirEntry, error) {
	var out []dirEntry
	for len(b) > 0 {
		if len(b) < direntHeader {
			return nil, errors.New("truncated directory entry")
		}
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen <= direntHeader || reclen > len(b) {
			return nil, errors.New("bad directory entry length")
		}
		name := b[direntHeader:reclen]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		typ := b[18]
		b = b[reclen:]
		switch string(name) {
		case ".", "..":
			continue
		case "":
			return nil, errors.New("a directory entry without a name")
		}
		if slices.Contains(name, '/') {
			return nil, errors.New("a directory entry's name holds a slash")
		}
		out = append(out, dirEntry{name: string(name), typ: direntType(typ)})
	}
	return out, nil
}

// direntType is os's reading of d_type; typeUnknown for DT_UNKNOWN.
func direntType(t byte) fs.FileMode {
	switch t {
	case unix.DT_BLK:
		return fs.ModeDevice
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_REG:
		return 0
	case unix.DT_SOCK:
		return fs.ModeSocket
	}
	return typeUnknown
}

// rename is rename(2) (os.Rename lstats the new name first).
func rename(from, to string) error {
	if err := unix.Rename(from, to); err != nil {
		return &fs.PathError{Op: "rename", Path: from, Err: err}
	}
	return nil
}

// ownLikeDir gives file the owner and group of the directory it is in
// when this process is root and the directory is another user's: a
// launcher run under sudo (become) writes rules back into the login
// user's launcher directory, where that user reads them next (the file
// tools' level check; a launcher run without sudo). Best effort.
func ownLikeDir(file string) {
	if unix.Geteuid() != 0 {
		return
	}
	var st unix.Stat_t
	if err := unix.Stat(path.Dir(file), &st); err != nil || st.Uid == 0 {
		return
	}
	unix.Chown(file, int(st.Uid), int(st.Gid))
}

// eaccessExec checks that the process may execute file, by its effective
// IDs.
func eaccessExec(file string) error {
	return unix.Faccessat(unix.AT_FDCWD, file, unix.X_OK, unix.AT_EACCESS)
}

// readOnlyFS reports whether p lies on a file system mounted read-only
// (a Nix or Guix store): nothing there can be written, whatever the rules.
func readOnlyFS(p string) bool {
	var st unix.Statfs_t
	return unix.Statfs(p, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}
