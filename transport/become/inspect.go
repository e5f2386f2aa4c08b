package become

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/autoshell/agent/transport"
)

// inspectScript prints, NUL-terminated: where $1 really is (readlink -f,
// whose trailing newline is taken off exactly), then `stat -L` of it
// (size, raw mode, mtime, uid, gid, hard links) or "-" when nothing is there, then,
// for a regular file of at most $2 bytes it may read, "c" and up to $2+1
// bytes of its content (more than $2: it grew, and is not taken).
const inspectScript = `f=$1; max=$2; r=$(readlink -f -- "$f" && echo .) || exit 3; r=${r%.}; r=${r%?}; ` +
	`printf '%s\0' "$r"; ` +
	`if [ ! -e "$r" ]; then printf -- '-\0'; exit 0; fi; ` +
	`s=$(stat -L -c '%s %f %Y %u %g %h' -- "$r") || exit 1; printf '%s\0' "$s"; ` +
	`if [ "$max" -gt 0 ] && [ -f "$r" ] && [ -r "$r" ] && [ "${s%% *}" -le "$max" ]; then ` +
	`printf 'c\0'; exec head -c "$((max+1))" -- "$r"; fi`

// Inspect looks at p as the become user with one sudo command
// (transport.Inspector): RealPath, Stat with the owner, and the content of
// a regular file of at most readMax bytes.
func (t *Transport) Inspect(ctx context.Context, p string, readMax int64) (transport.Inspection, error) {
	abs, err := t.resolve(ctx, p)
	if err != nil {
		return transport.Inspection{}, fmt.Errorf("inspect %s: %w", p, err)
	}
	var out bytes.Buffer
	res, err := t.script(ctx, inspectScript, &out, abs, strconv.FormatInt(max(readMax, 0), 10))
	if err != nil {
		return transport.Inspection{}, fmt.Errorf("inspect %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return transport.Inspection{}, fileError("inspect", p, res)
	}
	in, err := parseInspection(out.Bytes(), readMax)
	if err != nil {
		return transport.Inspection{}, fmt.Errorf("inspect %s: %w", p, err)
	}
	return in, nil
}

// parseInspection reads inspectScript's output, which is the host's:
// anything but what the script prints is an error.
func parseInspection(out []byte, readMax int64) (transport.Inspection, error) {
	var in transport.Inspection
	fields := bytes.SplitN(out, []byte{0}, 4)
	bad := fmt.Errorf("unexpected inspect output %q", oneLine(string(out[:min(len(out), 200)]), 100))
	if len(fields) < 3 {
		return in, bad
	}
	in.Real = string(fields[0])
	if !path.IsAbs(in.Real) || path.Clean(in.Real) != in.Real || strings.ContainsRune(in.Real, '\n') {
		return in, bad
	}
	if string(fields[1]) == "-" {
		if len(fields) != 3 || len(fields[2]) != 0 {
			return in, bad
		}
		return in, nil
	}
	st := strings.Fields(string(fields[1]))
	if len(st) != 6 {
		return in, bad
	}
	fi, err := parseStat(path.Base(in.Real), strings.Join(st[:3], " "))
	uid, err1 := strconv.Atoi(st[3])
	gid, err2 := strconv.Atoi(st[4])
	links, err3 := strconv.Atoi(st[5])
	if err != nil || err1 != nil || err2 != nil || err3 != nil || uid < 0 || gid < 0 || links < 0 {
		return in, bad
	}
	in.Info, in.UID, in.GID, in.Owned, in.Links = fi, uid, gid, true, links
	switch {
	case len(fields) == 3 && len(fields[2]) == 0:
	case len(fields) == 4 && string(fields[2]) == "c":
		if int64(len(fields[3])) <= readMax {
			in.Content, in.Read = fields[3], true
		}
	default:
		return in, bad
	}
	return in, nil
}
