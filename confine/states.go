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
	// Not blocking: it may have become a fifo since; checked again open.
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return 0, StateUnknown
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > max {
		return 0, StateUnknown // not a regular file, or over the bound: the controller's
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(b)) > max {
		return 0, StateUnknown // it grew since: the large state is the controller's
	}
	d := newSHA256()
	d.Write(b)
	sum := d.Sum()
	return int64(len(b)), hexString(sum[:])
}
