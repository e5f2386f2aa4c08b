package ssh

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/pkg/sftp"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/transport"
)

// InspectAll looks at paths in one request to the served worker
// (confine's look request): what Inspect says of each, without a file
// session (transport.LookAheader). A path the worker leaves to the
// controller (a link on the way, an error), and every path when no
// served worker is idle, is answered ok false: the caller asks Inspect.
func (t *Transport) InspectAll(ctx context.Context, paths []string, readMax []int64) ([]transport.Inspection, []error, []bool) {
	in, errs, ok := make([]transport.Inspection, len(paths)), make([]error, len(paths)), make([]bool, len(paths))
	if len(paths) == 0 || len(readMax) != len(paths) || ctx.Err() != nil {
		return in, errs, ok
	}
	for _, p := range paths {
		if !path.IsAbs(p) || strings.ContainsRune(p, 0) {
			return in, errs, ok
		}
	}
	t.wmu.Lock()
	serving := t.serve != nil
	t.wmu.Unlock()
	if !serving {
		return in, errs, ok // no worker is started for it: the file session answers
	}
	w := t.takeWorker(ctx, false)
	if w == nil {
		return in, errs, ok
	}
	defer t.releaseWorker(w)
	if w.served == "" {
		return in, errs, ok
	}
	lines, err := w.look(ctx, paths, readMax)
	if err != nil {
		return in, errs, ok
	}
	for i, l := range lines {
		if l == "!" { // as SFTP's lstat of the missing name says it
			errs[i], ok[i] = fmt.Errorf("inspect %s: %w", paths[i], &fs.PathError{Op: "lstat", Path: paths[i], Err: fs.ErrNotExist}), true
			continue
		}
		in[i], ok[i] = parseLook(paths[i], l)
	}
	return in, errs, ok
}

// look sends a look request and returns its answer's lines, one a path.
func (w *worker) look(ctx context.Context, paths []string, readMax []int64) ([]string, error) {
	nonce := randomHex(16)
	var out bytes.Buffer
	done := w.expect(nonce, &out, io.Discard)
	if _, err := io.WriteString(w.in, confine.LookRequest(nonce, paths, readMax)); err != nil {
		w.broken = true
		return nil, err
	}
	if err, _ := w.started(ctx); err != nil {
		w.broken = true
		return nil, err
	}
	var m string
	select {
	case m = <-done:
	case <-w.exited:
	case <-ctx.Done():
	case <-time.After(workerReadyTimeout):
	}
	if m != ":0:0" {
		w.broken = true // its answer may come later, taken for the next request's
		return nil, errLookFailed
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(paths) || out.Len() == 0 {
		return nil, errLookFailed
	}
	return lines, nil
}

type lookError struct{}

func (lookError) Error() string { return "look: the worker did not answer" }

var errLookFailed error = lookError{}

// parseLook reads one line of a look's answer for p (confine.LookRequest):
// ok false when it says nothing Inspect would.
func parseLook(p, line string) (transport.Inspection, bool) {
	var in transport.Inspection
	switch {
	case line == "-":
		in.Real = p
		return in, true
	case !strings.HasPrefix(line, "= "):
		return in, false
	}
	f := strings.Split(line[2:], " ")
	if len(f) != 7 {
		return in, false
	}
	fi, err := parseStat(path.Base(p), strings.Join(f[:5], " "))
	if err != nil {
		return in, false
	}
	// The hard-link count, which SFTP's attributes lack: the journal
	// refuses a file with other names as it does on this machine.
	links, err := strconv.ParseUint(f[5], 10, 31)
	if err != nil || links == 0 || strconv.FormatUint(links, 10) != f[5] {
		return in, false
	}
	in.Real, in.Info, in.Links = p, fi, int(links)
	if st, ok := fi.Sys().(*sftp.FileStat); ok {
		in.UID, in.GID, in.Owned = int(st.UID), int(st.GID), true
	}
	switch data := f[6]; {
	case data == "-":
	case strings.HasPrefix(data, "x"):
		b, err := hex.DecodeString(data[1:])
		if err != nil || int64(len(b)) != fi.Size() {
			return transport.Inspection{}, false
		}
		in.Content, in.Read = b, true
	default:
		return transport.Inspection{}, false
	}
	return in, true
}
