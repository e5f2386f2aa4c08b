package ssh

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	gossh "golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/transport"
)

// MaxExec is the longest exec request agent sends a host. Dropbear ends
// the connection for one over 9,000 bytes ("String too long"), OpenSSH
// takes 256 KiB; 8 KiB keeps every server agent meets within its limit.
// Bulk goes on the command's standard input instead: a command whose exec
// request would be longer is sent as a request line on standard input
// (pipedCommand), ahead of its own input.
const MaxExec = 8 << 10

// ErrExecTooLong marks an exec request over MaxExec: a route that built one
// must send its bulk on standard input instead. startExec refuses it
// before anything reaches the host.
var ErrExecTooLong = fmt.Errorf("exec request over agent's limit of %d bytes", MaxExec)

// startExec is the one way this package starts a command on a session:
// it refuses an exec request over MaxExec (the guard; a host like
// Dropbear would drop the connection for it).
func startExec(sess *gossh.Session, command string) error {
	if n := len(command); n > MaxExec {
		return fmt.Errorf("%w: %d bytes (Dropbear ends the connection past 9,000; send the bulk on standard input)", ErrExecTooLong, n)
	}
	return sess.Start(command)
}

// pipedHead reads the wrapper's arguments (requestLine: CMD DIR NONCE
// [WRAP...]) as one line on standard input. The shell's read builtin reads
// a pipe a byte at a time, so the command's own input that follows is
// left whole for it.
const pipedHead = `agent_nl='
'; IFS= read -r agent_req || exit 125; eval "set -- $agent_req"; unset agent_req agent_nl; `

// pipedCommand is the exec request of a command sent on standard input: the
// same wrapper as remoteCommand, with its arguments read first.
var pipedCommand = "exec /bin/sh -c " + shellQuote(pipedHead+wrapper) + " sh"

// execRequest is the exec request that runs cmd with the marker nonce, and
// the standard input to send with it: remoteCommand when its length is
// within limit, else pipedCommand with the request line ahead of
// cmd.Stdin.
func execRequest(nonce string, cmd transport.Command, limit int) (string, io.Reader) {
	if req := remoteCommand(nonce, cmd.Command, cmd.Dir, cmd.Wrap); len(req) <= limit {
		return req, cmd.Stdin
	}
	line := strings.NewReader(requestLine(append([]string{cmd.Command, cmd.Dir, nonce}, cmd.Wrap...)...) + "\n")
	if cmd.Stdin == nil {
		return pipedCommand, line
	}
	return pipedCommand, io.MultiReader(line, cmd.Stdin)
}

// execLimit is the longest exec request t sends as it is: MaxExec, or
// the piped command's length once the host ended a connection (or
// refused) at a longer one.
func (t *Transport) execLimit() int {
	if n := int(t.execMax.Load()); n > 0 {
		return n
	}
	return MaxExec
}

// execFailed handles an exec request of n bytes the host refused (lost:
// the connection ended at it). A request longer than the piped command
// may have been over the server's own limit: from now on such commands
// go on standard input (said once), and retry reports whether this one
// may be sent again that way (only when refused: nothing ran). The error
// names the request's length and agent's limit.
func (t *Transport) execFailed(n int, lost bool, err error) (retry bool, _ error) {
	if n <= len(pipedCommand) {
		if lost {
			return false, err
		}
		return false, fmt.Errorf("the host refused an exec request of %d bytes: %w", n, err)
	}
	if t.execMax.Swap(int64(len(pipedCommand))) != int64(len(pipedCommand)) {
		t.opts.Warn(fmt.Sprintf("%s: the SSH server %s an exec request of %d bytes (agent sends none over %d; Dropbear's limit is 9,000): its limit is lower; longer commands now go on standard input",
			t.Host().Name, map[bool]string{true: "ended the connection at", false: "refused"}[lost], n, MaxExec))
	}
	if lost {
		return false, fmt.Errorf("%w; the SSH server ended the connection at an exec request of %d bytes: its limit on exec requests may be lower than agent's %d (Dropbear's is 9,000); commands that long now go on standard input, run it again", err, n, MaxExec)
	}
	return true, nil
}

// Dropbear before 2024.84 may close a session channel that is open but
// has not had its exec request yet when another of the connection's
// session processes exits (its check_close runs for every channel), and
// then asserts when data comes for it ("Failed assertion
// (common-channel.c:705): !channel->sent_close"): the whole connection
// ends (Dropbear's issue 321, fixed by its commit "Don't close channels
// when a PID hasn't started"). On such a server a Transport opens and
// runs one command session at a time (the worker's start included): no
// session's process can then exit while another is being started.

// gatedDropbear reports whether version is a Dropbear with that bug.
func gatedDropbear(version string) bool {
	v, ok := strings.CutPrefix(version, "SSH-2.0-dropbear")
	if !ok {
		return false
	}
	v = strings.TrimPrefix(v, "_")
	v, _, _ = strings.Cut(v, " ")
	year, minor, _ := strings.Cut(v, ".")
	y, err1 := strconv.Atoi(year)
	m, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return true // a Dropbear of unknown version: be safe
	}
	return y < 2024 || y == 2024 && m < 84
}

// gate holds t's one command session, on a server that needs it
// (gatedDropbear); the func it returns gives it back (once, however
// often it is called).
func (t *Transport) gate(ctx context.Context) (func(), error) {
	if t.chanGate == nil {
		return func() {}, nil
	}
	if err := acquire(ctx, t.chanGate); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { <-t.chanGate }) }, nil
}
