package confine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A served worker's state request (Serve): the states of files as the
// undo journal compares them (journal.State), read on the host right
// after a command, in the same round trip as the command (the transport
// sends it behind the command's request). The line (StatesRequest) is
//
//	NONCE = state MAX PATH...
//
// each path escaped as a ruleset's are (escapePath: no quoting, so that a
// launcher from before this request reads the line as a bad request and
// runs nothing). The answer is one line a path on stdout, "SIZE STATE",
// then NONCE's end markers with status 0; a request it cannot read ends
// with LaunchExit and a message on stderr.
//
// STATE is what journal.State says of the path where it is sure to say
// the same: "absent" (no such file: ENOENT, links followed), the content's
// SHA-256 in lower-case hexadecimal for a regular file of at most MAX
// bytes (SIZE its bytes), "special:fifo", "special:socket",
// "special:device" or "special:special file". For anything else (a
// directory, a file over MAX, an error such as EACCES or ENOTDIR) it is
// StateUnknown: the controller reads that path itself.
const (
	statesKey  = "="
	statesVerb = "state"
)

// StateUnknown is the state of a path the worker left to the controller.
const StateUnknown = "?"

// StatesRequest is the state request line for paths (absolute, no NUL),
// MAX bytes a file.
func StatesRequest(nonce string, max int64, paths []string) string {
	var b strings.Builder
	b.WriteString(nonce + " " + statesKey + " " + statesVerb + " " + strconv.FormatInt(max, 10))
	for _, p := range paths {
		b.WriteString(" " + escapePath(p))
	}
	return b.String() + "\n"
}

// answerStates answers a state request: rest is "MAX PATH...".
func (s *server) answerStates(nonce, rest string) {
	max, paths, ok := parseStatesRequest(rest)
	if !ok {
		s.fail("serve: a bad state request")
		s.mark(nonce, "", LaunchExit, false)
		return
	}
	var b strings.Builder
	for _, p := range paths {
		size, st := fileState(p, max)
		b.WriteString(strconv.FormatInt(size, 10) + " " + st + "\n")
	}
	s.mark(nonce, b.String(), 0, false)
}

// parseStatesRequest reads "MAX PATH...": MAX in decimal as strconv
// writes it, at least one path, each absolute and without NUL.
func parseStatesRequest(rest string) (int64, []string, bool) {
	words := strings.Split(rest, " ")
	max, err := strconv.ParseInt(words[0], 10, 64)
	if err != nil || max < 0 || strconv.FormatInt(max, 10) != words[0] || len(words) < 2 {
		return 0, nil, false
	}
	paths := make([]string, 0, len(words)-1)
	for _, w := range words[1:] {
		p, err := unescapePath(w)
		if err != nil || p[0] != '/' || strings.IndexByte(p, 0) >= 0 {
			return 0, nil, false
		}
		paths = append(paths, p)
	}
	return max, paths, true
}

// fileState is p's state as journal.State would say it, and the bytes
// read of it; StateUnknown where it might not say the same.
func fileState(p string, max int64) (int64, string) {
	typ, err := statType(p) // links followed, as journal.State's read
	switch {
	case errors.Is(err, unix.ENOENT):
		return 0, "absent"
	case err != nil, typ&fs.ModeDir != 0: // a tree's state is the controller's
		return 0, StateUnknown
	case typ&fs.ModeNamedPipe != 0:
		return 0, "special:fifo"
	case typ&fs.ModeSocket != 0:
		return 0, "special:socket"
	case typ&fs.ModeDevice != 0:
		return 0, "special:device"
	}
	b, ok := readSmall(p, max)
	if !ok {
		return 0, StateUnknown // not a regular file now, over the bound, unreadable: the controller's
	}
	d := newSHA256()
	d.Write(b)
	sum := d.Sum()
	return int64(len(b)), hexString(sum[:])
}

// A look request (Serve), "NONCE = look MAX PATH MAX PATH...", asks what
// is at each path as the transport's Inspect says it, each path's MAX
// the most bytes of a regular file's content read with the look (0:
// none). The answer is one line a path on stdout:
//
//   - nothing there: the last name is missing, every name above it a directory
//     !                               a directory on the way is missing (ENOENT)
//     = MODE SIZE MTIME UID GID NLINK DATA  a file: st_mode in hexadecimal, size, mtime in seconds, owner,
//     hard-link count (which SFTP's attributes lack: the undo journal refuses a file with other
//     names), and its content in hexadecimal after an "x", or "-" when not read
//     ?                               anything else (a link on the way, a missing or unsearchable directory
//     above, "." or ".." in it): the controller looks itself
//
// then NONCE's end markers with status 0.
const lookVerb = "look"

// LookRequest is the look request line for paths (absolute, no NUL), with
// each path's read bound.
func LookRequest(nonce string, paths []string, max []int64) string {
	var b strings.Builder
	b.WriteString(nonce + " " + statesKey + " " + lookVerb)
	for i, p := range paths {
		b.WriteString(" " + strconv.FormatInt(max[i], 10) + " " + escapePath(p))
	}
	return b.String() + "\n"
}

// answerLooks answers a look request: rest is "MAX PATH MAX PATH...".
func (s *server) answerLooks(nonce, rest string) {
	words := strings.Split(rest, " ")
	var b strings.Builder
	if len(words)%2 != 0 {
		words = nil
	}
	for i := 0; i+1 < len(words); i += 2 {
		max, paths, ok := parseStatesRequest(words[i] + " " + words[i+1])
		if !ok {
			words = nil
			break
		}
		b.WriteString(look(paths[0], max) + "\n")
	}
	if len(words) == 0 {
		s.fail("serve: a bad look request")
		s.mark(nonce, "", LaunchExit, false)
		return
	}
	s.mark(nonce, b.String(), 0, false)
}

// look is the answer line of a look at p (no newline).
func look(p string, max int64) string {
	if !cleanAbs(p) {
		return StateUnknown
	}
	var st unix.Stat_t
	for i := 1; ; i++ {
		j := strings.IndexByte(p[i:], '/')
		name := p
		if j >= 0 && p != "/" {
			name = p[:i+j]
		}
		last := j < 0 || p == "/"
		err := unix.Lstat(name, &st)
		switch {
		case err == unix.ENOENT && last:
			return "-"
		case err == unix.ENOENT:
			return "!" // a directory on the way is missing
		case err != nil, st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return StateUnknown // a link on the way, or an error: the controller's look
		case !last && st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return StateUnknown
		}
		if last {
			break
		}
		i += j
	}
	out := "= " + strconv.FormatUint(uint64(st.Mode), 16) + " " + strconv.FormatInt(st.Size, 10) + " " +
		strconv.FormatInt(st.Mtim.Sec, 10) + " " + strconv.FormatUint(uint64(st.Uid), 10) + " " + strconv.FormatUint(uint64(st.Gid), 10) +
		" " + strconv.FormatUint(uint64(st.Nlink), 10)
	if max <= 0 || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > max {
		return out + " -"
	}
	b, ok := readSmall(p, max)
	if !ok {
		return out + " -"
	}
	return out + " x" + hexString(b)
}

// cleanAbs reports whether p is absolute with no "." or ".." names, no
// empty ones and no trailing slash (but "/").
func cleanAbs(p string) bool {
	if p == "/" {
		return true
	}
	if len(p) < 2 || p[0] != '/' || p[len(p)-1] == '/' {
		return false
	}
	for _, n := range strings.Split(p[1:], "/") {
		if n == "" || n == "." || n == ".." {
			return false
		}
	}
	return true
}

// readSmall reads the regular file p of at most max bytes, without
// blocking on what may have become a fifo since it was looked at.
func readSmall(p string, max int64) ([]byte, bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > max {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(b)) > max {
		return nil, false
	}
	return b, true
}
