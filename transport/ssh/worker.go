package ssh

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/transport"
)

// A worker is one long-lived /bin/sh on its own session channel that runs
// commands without stdin one at a time, so that a step costs a fork and two
// execs on the host instead of a new sshd session, a login shell and
// /bin/sh (bench/: that start-up is most of a step's latency).
//
// Each command still gets what a session of its own gives it: it runs as
// `/bin/sh -c wrapper …` (the same wrapper as the session path: marker with
// its PID, cd, eval) in a process group of its own — a bash job with job
// control on, or setsid(1) under /bin/sh — with stdin from /dev/null, so a
// timeout kills exactly its process group. After
// it exits the worker prints an end marker with a fresh random nonce on
// stdout ("NONCE:STATUS:BG") and on stderr ("NONCE"), which delimit its
// output; BG is 1 when processes of its group are still running. Such a
// worker is retired: background processes may still hold its output
// streams, and their later output must not be taken for the next command's.
// A retired worker is drained until its channel closes.
//
// Hosts with neither bash nor setsid(1), commands with stdin, and commands
// arriving while the worker is busy take the session path.
type worker struct {
	c         *conn
	sess      *gossh.Session
	in        io.WriteCloser
	out       demux
	errs      demux
	exited    chan struct{} // closed when the worker's session ended
	busy      sync.Mutex
	broken    bool   // set under busy: the worker must not be used again
	lingering bool   // set under busy: its last command left processes in its group
	home      string // $HOME as the shell has it (what commands inherit); "" if not absolute
	sized     bool   // a shell worker that reads a long request by its length (sizedMin)
	command   int    // the workerCommands entry that started it
	served    string // the command that started a served worker (Transport.ServeWorker); "" for the shell
	// starting yields the ready marker of the served worker become
	// started, until run took it (set and read under busy).
	starting <-chan string
}

// workerCommands start the worker shell, tried in turn until one answers:
// bash when the host has it (its job control gives every background job a
// process group of its own without another exec — a third cheaper per step
// than setsid(1)), else /bin/sh. The first has the login shell exec bash
// itself, in a syntax every shell parses (csh and fish too); where bash is
// missing the login shell exits, and the second finds bash or /bin/sh
// through /bin/sh: a detection only a POSIX shell parses (under csh its
// `2>&1` would write a file named 1), which costs every host with bash one
// exec more (0.4–0.9 ms of CPU a host in the fan-out, docs/bench.md).
var workerCommands = []string{
	`exec bash --noprofile --norc -s`,
	`exec /bin/sh -c 'command -v bash >/dev/null 2>&1 && exec bash --noprofile --norc -s; exec /bin/sh -s'`,
}

// workerScript is sent first on the worker's stdin; workerLoop, after the
// ready marker, then reads one request a line: NONCE, the ahead key, NEXT
// (1, or 0 when no command is expected after this one:
// transport.WithLastStep), then the command's arguments quoted for a POSIX
// shell on one line (requestLine): CMD DIR PIDNONCE [WRAP...]. Under bash
// 4.1 and later ("sized" in its hello's answer) a long request's words
// come instead as "=LENGTH" and, after the line, that many bytes (no
// newline), read with read -N: bash reads a line from a pipe a byte at a
// time, a read(2) each (a plan's 22 KB set-up command cost every host
// 22,500 of them; read -N reads them in blocks). Each runs
// the wrapper under /bin/sh (whatever the worker shell is), in a process
// group of its own, with stdin from /dev/null; its output goes to the
// worker's stdout and stderr (kept as fds 8 and 9: bash's own stderr is
// /dev/null, so that its job reports are never taken for a command's
// output).
//
// Under bash 4 and later the /bin/sh of the next command is started ahead,
// as soon as the previous one has ended (a coprocess: its own process
// group under job control): it waits for its request on the coprocess's
// pipe, then runs the same wrapper as the session path with stdin from
// /dev/null. A command's fork and exec of /bin/sh are then off its critical
// path (bench/: that start is most of the host's time a step). Requests
// longer than workerPipedMax are started afresh instead (/bin/sh reads its
// request a byte at a time) and leave the waiting shell for the next one.
// After a request with NEXT 0 (a plan's last step) no shell is started
// ahead: it would wait until the connection closes, a fork and an exec
// wasted on every host of a batch (docs/bench.md).
// bash 3 (no coproc) and /bin/sh with setsid(1) start each command afresh.
//
// wait's stderr is discarded: bash would report a job killed by a signal
// there ("[1]+ Terminated"), which is not the command's output.
var workerScript = `exec 8>&1 9>&2
agent_sized=
agent_nl='
'
agent_wrapper=` + shellQuote(wrapper) + `
if [ -n "${BASH_VERSION:-}" ]; then
	set -m
	exec 2>/dev/null
	trap : PIPE
	[ "${BASH_VERSINFO[0]}" -gt 4 ] || { [ "${BASH_VERSINFO[0]}" -eq 4 ] && [ "${BASH_VERSINFO[1]}" -ge 1 ]; } && agent_sized=sized
	agent_spawn() { ( exec /bin/sh -c "$agent_wrapper" sh "$@" 2>&9 8>&- 9>&- ) </dev/null & }
	if [ "${BASH_VERSINFO[0]}" -ge 4 ]; then
		agent_child="agent_nl='$agent_nl'"'; agent_ck=$1; IFS=" " read -r agent_rk agent_req || exit 0; exec </dev/null; if [ "$agent_ck" != - ] && [ "$agent_rk" != "$agent_ck" ]; then echo "agent: a request for another wrapper" >&2; exit 125; fi; eval "set -- $agent_req"; [ "$agent_ck" = - ] || set -- "$1" "$2" "$3"; unset agent_req agent_rk agent_ck agent_nl; '"$agent_wrapper"
		eval 'agent_ahead() {
			if [ -n "${agent_c_PID:-}" ]; then
				[ "$agent_ck" = "${agent_k:--}" ] && return
				eval "exec ${agent_c[1]}>&-"
				wait "$agent_c_PID"
			fi
			agent_ck=${agent_k:--}
			set --
			[ "$agent_ck" = - ] || { eval "set -- $agent_req"; shift 3; }
			coproc agent_c { exec "$@" /bin/sh -c "$agent_child" sh "$agent_ck" 1>&8 2>&9 8>&- 9>&-; }
		}
		agent_stop() {
			[ -n "${agent_c_PID:-}" ] || return 0
			eval "exec ${agent_c[1]}>&-"
			wait "$agent_c_PID"
		}
		agent_piped() {
			[ -n "${agent_c_PID:-}" ] && [ ${#agent_req} -le ` + strconv.Itoa(workerPipedMax) + ` ] || return 1
			[ "$agent_ck" = - ] || [ "$agent_ck" = "$agent_k" ] || return 1
			agent_pid=$agent_c_PID
			printf "%s %s\n" "$agent_k" "$agent_req" >&"${agent_c[1]}" && return
			wait "$agent_pid"
			return 1
		}'
	fi
else
	command -v setsid >/dev/null 2>&1 || exit 97
	agent_spawn() { setsid /bin/sh -c "$agent_wrapper" sh "$@" </dev/null 8>&- 9>&- & }
fi
command -v agent_ahead >/dev/null 2>&1 || {
	agent_ahead() { :; }
	agent_piped() { return 1; }
	agent_stop() { :; }
}
`

// workerLoop runs the requests, after the ready marker. A request whose
// NEXT is "exec" has the worker exec its arguments in its place, on the
// same session, its own stderr back (worker.become).

const workerLoop = `[ "$agent_first" = late ] || agent_ahead
while read -r agent_n agent_k agent_next agent_req; do
	case $agent_req in =[0-9]*) IFS= read -r -N "${agent_req#=}" agent_req || exit 0 ;; esac
	if [ "$agent_next" = exec ]; then
		agent_stop
		eval "exec $agent_req 2>&9 8>&- 9>&-"
	fi
	if ! agent_piped; then
		eval "agent_spawn $agent_req"
		agent_pid=$!
	fi
	wait "$agent_pid" 2>/dev/null
	agent_st=$?
	agent_bg=0
	kill -0 -"$agent_pid" 2>/dev/null && agent_bg=1
	printf '%s:%d:%d\n' "$agent_n" "$agent_st" "$agent_bg" >&8
	printf '%s\n' "$agent_n" >&9
	[ "$agent_next" = 0 ] || agent_ahead
done
`

// workerPipedMax is the longest request the waiting /bin/sh is handed.
const workerPipedMax = 4096

// aheadKey names the wrapper a command's shell may be started under ahead
// of it (transport.Command.Ahead): a hash of its argv, or "-" for none.
func aheadKey(cmd transport.Command) string {
	if !cmd.Ahead || len(cmd.Wrap) == 0 {
		return "-"
	}
	sum := sha256.Sum256([]byte(strings.Join(cmd.Wrap, "\x00")))
	return hex.EncodeToString(sum[:12])
}

// requestLine is args quoted for a POSIX shell on one line: newlines
// outside the quotes, as "$agent_nl" (a newline in the worker and in the
// waiting shell).
func requestLine(args ...string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		for j, part := range strings.Split(a, "\n") {
			if j > 0 {
				b.WriteString(`"$agent_nl"`)
			}
			b.WriteString(shellQuote(part))
		}
	}
	return b.String()
}

// workerReadyTimeout bounds the start of a worker.
const workerReadyTimeout = 10 * time.Second

// startWorker starts the worker on c with the first of workerCommands the
// host runs. It fails when the host lacks both bash and setsid. late: the
// first request is too long for a shell started ahead (workerPipedMax),
// so none is started before it (a fork and an exec wasted on every host
// of a confined fan-out, whose first request is the 22 KB set-up).
func startWorker(ctx context.Context, c *conn, late bool) (*worker, error) {
	hello := func(nonce string) string { return shellHello(nonce, late) }
	for i, command := range workerCommands {
		w, err := startWorkerWith(ctx, c, command, hello, true)
		if err == nil {
			w.command = i
			return w, nil
		}
		if !errors.Is(err, errWorkerExited) || i == len(workerCommands)-1 {
			return nil, err
		}
	}
	panic("unreachable")
}

// errWorkerExited is the worker's shell exiting before it answered.
var errWorkerExited = errors.New("worker start: the host's shell exited (neither bash nor setsid?)")

// shellHello is what the shell worker is sent first: its script, then
// "sized" (long requests by their length) or "line", $HOME and the ready
// markers of nonce, then its loop (late: no shell started ahead before its
// first request).
//
// The script comes as the body of a first line that reads it by its
// length (read -N) and evaluates it: bash reads a script from a pipe a
// byte at a time, a read(2) each (~3,000 for the body: ~1 ms of a
// host's CPU), while its read -N reads them in blocks (bash 5.1 and
// later). Where read has no -N (dash, BusyBox sh, bash before 4.1) the
// line fails, with a message on stderr (before the ready marker: not
// taken for a command's), and the shell reads the body as its script,
// as before. The body is ASCII: read -N counts characters.
func shellHello(nonce string, late bool) string {
	first := "agent_first=\n"
	if late {
		first = "agent_first=late\n"
	}
	body := workerScript + first + "printf '%s\\n' \"${agent_sized:-line}\" \"$HOME\" >&8; printf '%s:0:0\\n' " + nonce + " >&8; printf '%s\\n' " + nonce + " >&9\n" + workerLoop
	return "IFS= read -r -N " + strconv.Itoa(len(body)) + " agent_s && eval \"$agent_s\"\n" + body
}

// servedHello is what a served worker is sent first (confine.Serve): the
// ready marker's nonce and the wrapper it runs each command with.
func servedHello(nonce string) string {
	return nonce + " " + requestLine(wrapper) + "\n"
}

// startServed starts a served worker on c with command, which execs a
// program that speaks the worker's protocol itself (a launcher's -serve,
// Transport.ServeWorker).
func startServed(ctx context.Context, c *conn, command string) (*worker, error) {
	w, err := startWorkerWith(ctx, c, command, servedHello, false)
	if err != nil {
		return nil, err
	}
	w.served = command
	return w, nil
}

// startWorkerWith opens the worker's session on c, starts command, sends
// it hello and waits until it answers (a shell worker's answer begins
// with its "sized" or "line").
func startWorkerWith(ctx context.Context, c *conn, command string, hello func(nonce string) string, shell bool) (*worker, error) {
	sess, err := openSession(ctx, c.client)
	if err != nil {
		return nil, fmt.Errorf("worker session: %w", err)
	}
	w := &worker{c: c, sess: sess, exited: make(chan struct{})}
	if w.in, err = sess.StdinPipe(); err != nil {
		sess.Close()
		return nil, fmt.Errorf("worker stdin: %w", err)
	}
	sess.Stdout, sess.Stderr = &w.out, &w.errs
	if err := startExec(sess, command); err != nil {
		sess.Close()
		return nil, fmt.Errorf("worker start: %w", err)
	}
	go func() {
		sess.Wait()
		w.out.close()
		w.errs.close()
		close(w.exited)
	}()
	nonce := randomHex(16)
	var home bytes.Buffer // the shell's $HOME, printed before the ready marker: "~" then costs no command
	done := w.expect(nonce, &home, io.Discard)
	if _, err := io.WriteString(w.in, hello(nonce)); err != nil {
		select { // the shell may have exited already (no bash): the next command is tried
		case <-w.exited:
			err = errWorkerExited
		case <-time.After(closeWait):
			err = fmt.Errorf("worker start: %w", err)
		}
		sess.Close()
		return nil, err
	}
	if err := awaitReady(ctx, done); err != nil {
		w.in.Close()
		sess.Close()
		return nil, err
	}
	h := strings.TrimSuffix(home.String(), "\n")
	if shell {
		var how string
		how, h, _ = strings.Cut(h, "\n")
		w.sized = how == "sized"
	}
	if path.IsAbs(h) && !strings.ContainsRune(h, '\n') {
		w.home = h
	}
	return w, nil
}

// awaitReady waits for the ready marker expect's done yields: nil when it
// came, errWorkerExited when the worker's output ended first (its marker
// then comes empty, whichever of the two a select would have seen
// first), an error after workerReadyTimeout or when ctx ends.
func awaitReady(ctx context.Context, done <-chan string) error {
	timer := time.NewTimer(workerReadyTimeout)
	defer timer.Stop()
	select {
	case m := <-done:
		if m != ":0:0" {
			return errWorkerExited
		}
		return nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return errors.New("worker start: no answer from the host")
}

// become has the shell worker exec argv, a served worker (confine.Serve),
// in its place: the same session and process, no new login shell; the
// ahead shell is ended first. served is the command ServeWorker names it
// by. It does not wait for the served worker's ready marker: the next
// command's request is sent behind its hello, and run waits for both
// (a round trip less before the first confined step).
func (w *worker) become(argv []string, served string) error {
	nonce := randomHex(16)
	done := w.expect(nonce, io.Discard, io.Discard)
	if _, err := io.WriteString(w.in, randomHex(16)+" - exec "+requestLine(argv...)+"\n"+servedHello(nonce)); err != nil {
		return fmt.Errorf("worker exec: %w", err)
	}
	w.served, w.starting, w.sized = served, done, false
	return nil
}

// started waits for the ready marker of a served worker become started,
// if any. ran: the error leaves it unknown whether a request sent behind
// it ran (no answer in time, or ctx ended); otherwise nothing ran (the
// exec or the served worker's start failed before it read a request).
func (w *worker) started(ctx context.Context) (err error, ran bool) {
	ready := w.starting
	if ready == nil {
		return nil, false
	}
	w.starting = nil
	if err := awaitReady(ctx, ready); err != nil {
		return err, !errors.Is(err, errWorkerExited)
	}
	return nil, false
}

// expect routes the streams to stdout and stderr until both end markers of
// nonce arrived; the channel it returns then yields stdout's marker line.
func (w *worker) expect(nonce string, stdout, stderr io.Writer) <-chan string {
	done := make(chan string, 1)
	var once sync.WaitGroup
	once.Add(2)
	var status string
	w.out.expect([]byte(nonce), stdout, func(rest string) { status = rest; once.Done() })
	w.errs.expect([]byte(nonce), stderr, func(string) { once.Done() })
	go func() { once.Wait(); done <- status }()
	return done
}

// run runs cmd on the worker. ok is false when the worker could not take
// the command and nothing ran: the caller uses the session path.
func (w *worker) run(ctx context.Context, t *Transport, cmd transport.Command) (res transport.Result, err error, ok bool) {
	next := "1"
	if transport.IsLastStep(ctx) {
		next = "0"
	}
	p, req := w.request(ctx, cmd, next)
	p.start = time.Now()
	if _, err := io.WriteString(w.in, req); err != nil {
		w.broken = true
		return res, nil, false // the worker's shell is gone; nothing was started
	}
	if err, ran := w.started(ctx); err != nil {
		w.broken = true
		if !ran {
			return res, nil, false // the served worker did not start: the session path runs it
		}
		return res, fmt.Errorf("run %s: %w", brief(cmd.Command), err), true
	}
	res, err = w.answer(ctx, t, p)
	return res, err, true
}

// pending is a command sent to the worker whose answer is still to come.
type pending struct {
	cmd            transport.Command
	stdout, stderr *transport.Capture
	filter         *markerFilter
	done           <-chan string // its end markers
	after          *transport.AfterStates
	states         *bytes.Buffer
	statesDone     <-chan string // the state request's end markers, when after is set
	start          time.Time
}

// request is cmd's request with NEXT next, its output routed to its
// captures once the markers expected before it came.
func (w *worker) request(ctx context.Context, cmd transport.Command, next string) (*pending, string) {
	nonce, pidNonce := randomHex(16), randomHex(8)
	p := &pending{cmd: cmd, stdout: transport.NewCapture(cmd.CaptureLimit), stderr: transport.NewCapture(cmd.CaptureLimit)}
	p.filter = &markerFilter{prefix: []byte(pidNonce + " "), out: transport.Tee(p.stderr, cmd.Stderr),
		started: func(pid int) { transport.Started(ctx, pid) }}
	p.done = w.expect(nonce, transport.Tee(p.stdout, cmd.Stdout), p.filter)
	req := nonce + " " + aheadKey(cmd) + " " + next + " " + w.sizedLine(requestLine(append([]string{cmd.Command, cmd.Dir, pidNonce}, cmd.Wrap...)...))
	if p.after = w.afterStates(ctx); p.after != nil { // behind the command's request: read as soon as it ended
		sn := randomHex(16)
		p.states = new(bytes.Buffer)
		p.statesDone = w.expect(sn, p.states, io.Discard)
		req += confine.StatesRequest(sn, p.after.FileBytes, p.after.Paths)
	}
	return p, req
}

// answer waits for p's end: its result, its process group killed when
// it times out or ctx ends.
func (w *worker) answer(ctx context.Context, t *Transport, p *pending) (res transport.Result, err error) {
	cmd, filter := p.cmd, p.filter
	var timeout <-chan time.Time
	if cmd.Timeout > 0 {
		timer := time.NewTimer(cmd.Timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	var marker string
	var stopped error
	select {
	case marker = <-p.done:
	case <-w.exited:
	case <-timeout:
		stopped = fmt.Errorf("%w after %s", transport.ErrTimeout, cmd.Timeout)
	case <-ctx.Done():
		stopped = ctx.Err()
	}
	if stopped != nil {
		// Its group killed once its ID came, unless its marker comes
		// first saying it was not run (a batch's, after one that did
		// not succeed: no ID will come).
		pid := make(chan int, 1)
		go func() { pid <- filter.waitPID(pidWait) }()
		select {
		case marker = <-p.done:
			if marker != notRunMarker {
				t.killGroup(w.c, <-pid)
			}
		case id := <-pid:
			t.killGroup(w.c, id)
			select {
			case marker = <-p.done:
			case <-w.exited:
			case <-time.After(closeWait):
				w.broken = true
			}
		}
	}
	if marker == "" { // the worker ended: its last marker may have come with it
		select {
		case marker = <-p.done:
		default:
		}
	}
	if marker != "" && p.statesDone != nil {
		select {
		case m := <-p.statesDone:
			if m == ":0:0" {
				p.after.Set(parseStates(p.states.String(), len(p.after.Paths)))
			}
		case <-w.exited:
		case <-time.After(closeWait):
			w.broken = true // its answer would be taken for the next command's
		}
	}
	filter.flush()
	res = transport.Captured(-1, p.stdout, p.stderr, time.Since(p.start))
	if marker == "" { // the worker died mid-command
		w.broken = true
		switch {
		case stopped != nil:
			return res, fmt.Errorf("run %s: %w", brief(cmd.Command), stopped)
		case w.c.alive() && w.c.ping(closeWait): // the command killed its shell; the connection is fine
			return res, fmt.Errorf("run %s: the shell running it was killed before it reported a status", brief(cmd.Command))
		}
		return res, fmt.Errorf("run %s: %w", brief(cmd.Command), t.lostErr(w.c, errors.New("worker shell ended")))
	}
	if marker == notRunMarker {
		return transport.Result{ExitCode: -1}, transport.ErrNotRun
	}
	code, bg, _ := parseMarker(marker)
	if bg { // its background processes may still write
		w.broken = true
		// After our kill the group may linger only as zombies: no warning.
		w.lingering = stopped == nil
	}
	if stopped != nil {
		return res, fmt.Errorf("run %s: %w", brief(cmd.Command), stopped)
	}
	if status := filter.status(); status != "" && status != "ok" {
		return transport.Result{}, fmt.Errorf("run %s: %w", brief(cmd.Command), dirError(cmd.Dir, status))
	}
	res.ExitCode = code
	return res, nil
}

// notRunMarker is a served worker's marker of a batched request it did
// not run (confine.Serve).
const notRunMarker = ":" + confine.NotRunStatus + ":0"

// sizedMin is the shortest request a sized worker gets by its length: a
// line that short costs bash few reads.
const sizedMin = 256

// sizedLine is a request's words as the worker reads them: the line, or
// for a long one when the worker reads by length, "=LENGTH" and then the
// words without a newline. Only ASCII: bash's read -N counts characters
// in the host's locale, which are bytes then in every locale it has.
func (w *worker) sizedLine(words string) string {
	if !w.sized || len(words) < sizedMin {
		return words + "\n"
	}
	for i := 0; i < len(words); i++ {
		if words[i] >= 0x80 {
			return words + "\n"
		}
	}
	return "=" + strconv.Itoa(len(words)) + "\n" + words
}

// parseMarker parses ":STATUS:BG" after the nonce.
func parseMarker(s string) (code int, bg bool, err error) {
	parts := bytes.Split([]byte(s), []byte(":"))
	if len(parts) != 3 || len(parts[0]) != 0 {
		return -1, true, fmt.Errorf("bad worker marker %q", s)
	}
	code, err = strconv.Atoi(string(parts[1]))
	if err != nil {
		return -1, true, fmt.Errorf("bad worker marker %q", s)
	}
	return code, string(parts[2]) == "1", nil
}

// close ends the worker: its shell exits at the end of its input. The
// session is closed once its output streams end (background processes of
// the last command may hold them), so nothing they write is lost to a
// broken pipe.
func (w *worker) close(released func()) {
	w.in.Close()
	go func() {
		<-w.exited
		w.sess.Close()
		if released != nil {
			released()
		}
	}()
}

// demux passes a stream to the current command's writer until the end
// marker (a nonce, then the rest of its line) arrives; then it calls the
// command's done func with the rest of the line. Bytes arriving when no
// command is current are dropped. Markers are expected in turn: the output
// after one marker goes to the next expected one's writer.
type demux struct {
	mu      sync.Mutex
	queue   []expectation // the first is the one being read
	pending []byte        // held back: may be the start of the first's marker
	closed  bool
}

// expectation is one marker a demux waits for: the output before it goes
// to w, then done gets the rest of its line.
type expectation struct {
	nonce []byte
	w     io.Writer
	done  func(rest string)
}

// expect queues nonce's marker: output goes to w once the markers expected
// before it came (a request pipelined behind another's).
func (d *demux) expect(nonce []byte, w io.Writer, done func(string)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed { // the stream already ended: no marker will come
		done("")
		return
	}
	d.queue = append(d.queue, expectation{nonce, w, done})
}

func (d *demux) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(p)
	buf := append(d.pending, p...)
	d.pending = nil
	for len(d.queue) > 0 {
		e := d.queue[0]
		i := bytes.Index(buf, e.nonce)
		if i < 0 {
			keep := partialPrefix(buf, e.nonce)
			e.w.Write(buf[:len(buf)-keep])
			d.pending = append([]byte(nil), buf[len(buf)-keep:]...)
			return n, nil
		}
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 { // marker begun, line not complete yet
			e.w.Write(buf[:i])
			d.pending = append([]byte(nil), buf[i:]...)
			return n, nil
		}
		e.w.Write(buf[:i])
		rest := string(buf[i+len(e.nonce) : i+j])
		d.queue = d.queue[1:]
		e.done(rest)
		buf = buf[i+j+1:] // the next expected marker's output, if any
	}
	return n, nil // nothing expected: dropped
}

// close passes on what was held back: the stream ended.
func (d *demux) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.queue) > 0 {
		d.queue[0].w.Write(d.pending)
	}
	for _, e := range d.queue { // the markers will never come: release the waiters
		e.done("")
	}
	d.queue, d.pending, d.closed = nil, nil, true
}

// partialPrefix is the length of the longest suffix of buf that is a proper
// prefix of nonce: bytes that may be the start of a marker split across
// writes. For random output it is almost always 0, so output (and the
// wrapper's PID line) flows through without delay.
func partialPrefix(buf, nonce []byte) int {
	for k := min(len(buf), len(nonce)-1); k > 0; k-- {
		if bytes.HasPrefix(nonce, buf[len(buf)-k:]) {
			return k
		}
	}
	return 0
}

// afterStates is what ctx asks to read after the command
// (transport.AfterStates), cleared; nil when the worker cannot read it
// (only a served worker answers a state request: confine.Serve).
func (w *worker) afterStates(ctx context.Context) *transport.AfterStates {
	a := transport.AfterStatesOf(ctx)
	if a == nil {
		return nil
	}
	a.Set(nil)
	if w.served == "" || len(a.Paths) == 0 {
		return nil
	}
	for _, p := range a.Paths {
		if !path.IsAbs(p) || strings.ContainsRune(p, 0) {
			return nil
		}
	}
	return a
}

// parseStates reads a state request's answer: "SIZE STATE" a line, n of
// them; nil if it is not that. A "?" state is left to the caller ("").
func parseStates(out string, n int) []transport.FileState {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != n || out == "" {
		return nil
	}
	states := make([]transport.FileState, n)
	for i, l := range lines {
		size, st, ok := strings.Cut(l, " ")
		sz, err := strconv.ParseInt(size, 10, 64)
		if !ok || err != nil || sz < 0 || st == "" {
			return nil
		}
		if st != confine.StateUnknown {
			states[i] = transport.FileState{Value: st, Size: sz}
		}
	}
	return states
}
