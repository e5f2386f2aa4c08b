package confine

import (
	"bufio"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ServeFlag makes the launcher the worker of an SSH connection (Serve).
const ServeFlag = "-serve"

// Serve is the launcher as the worker of an SSH connection
// (transport/ssh's served worker; docs/decisions.md, "Locally on a
// thread, over SSH a launcher"): one process for the session that runs
// the commands one at a time, and confines those whose wrapper is its own rules in a
// thread of its own (Restrictor) instead of starting a launcher process
// per command. Each level's rules are read once and checked for
// staleness before every command by the same stamps the launcher checks
// (Ruleset.Stale), in this process: a link on the way to a secret that
// moved makes the rules compile again before the command starts, with no
// process started to find out.
//
// The protocol is the shell worker's: the first line is "NONCE WRAPPER",
// the wrapper script that runs each command as one word quoted for a
// POSIX shell (ParseRequest); Serve answers with $HOME on stdout, then
// the end markers of NONCE ("NONCE:0:0" on stdout, "NONCE" on stderr).
// Each further line is a request, "NONCE KEY NEXT CMD DIR PIDNONCE
// [WRAP...]" (KEY, the shell worker's hint for a wrapper started ahead,
// is not needed: the server knows WRAP). The command runs as `/bin/sh -c
// WRAPPER sh CMD DIR PIDNONCE [WRAP...]` with stdin from /dev/null,
// stdout and stderr Serve's own, in a process group of its own; where
// WRAP is self followed by RulesFlag FILE... --, WRAP is left out and the
// shell starts confined to those rules. Then Serve prints
// "NONCE:STATUS:BG" on stdout and "NONCE" on stderr: STATUS as a shell's
// wait reports it (128+N for a signal), BG 1 when processes of the
// command's group are still there. It returns at the end of its input.
//
// A request whose NEXT is BatchedPrefix then 1 or 0 is a command of a
// batch after its first (transport.Batch): it runs only when the command
// before it ran and exited 0 and the worker's input has not hung up (its
// controller is gone); otherwise it is answered "NONCE:-:0" and not run
// (serve_batch_linux.go).
//
// A request "NONCE = state MAX PATH..." (sent behind a command's, in
// the same round trip) asks for the states of files as the undo journal
// compares them, read after that command, and "NONCE = look MAX PATH..."
// what is at each path (the transport's Inspect): see states.go.
//
// As the shell worker does, it then starts the next command's shell
// ahead (unless NEXT is 0: a plan's last step), confined as the command
// just run was, waiting on a pipe for its request: the fork and exec are
// then off the next command's path. A request with another confinement,
// one too long for the pipe (aheadMax), or one that finds the rules gone
// stale since (Restrictor.Current) ends the waiting shell unused and
// starts its own.
//
// A request it cannot read, rules it cannot read or build, end the
// command with LaunchExit and a message on stderr: nothing runs
// unconfined that was to be confined.
func Serve(in io.Reader, stdout, stderr *os.File, self []string) int {
	rd := bufio.NewReader(in)
	hello, err := rd.ReadString('\n')
	if err != nil {
		return 0
	}
	nonce, word, _ := strings.Cut(strings.TrimSuffix(hello, "\n"), " ")
	words, err := ParseRequest(word)
	if err != nil || len(words) != 1 || nonce == "" {
		io.WriteString(stderr, LaunchPrefix+"serve: a bad first line\n")
		return LaunchExit
	}
	s := &server{wrapper: words[0], self: self, out: stdout, errs: stderr, confined: map[string]*rulesFiles{},
		child: "agent_nl='\n'; IFS=\" \" read -r agent_req || exit 0; exec </dev/null; eval \"set -- $agent_req\"; set -- \"$1\" \"$2\" \"$3\"; unset agent_req agent_nl; " + words[0],
		held:  "IFS= read -r agent_go || exit 0; exec </dev/null; unset agent_go; " + words[0]}
	s.inFd = inputFd(in)
	s.rd = rd
	defer s.close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		io.WriteString(stderr, LaunchPrefix+"serve: "+err.Error()+"\n")
		return LaunchExit
	}
	defer devnull.Close()
	s.devnull = devnull
	s.mark(nonce, os.Getenv("HOME")+"\n", 0, false)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return 0 // the end of the requests (a partial line is not run)
		}
		fields := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4)
		if len(fields) != 4 || fields[0] == "" {
			io.WriteString(stderr, LaunchPrefix+"serve: a bad request\n")
			return LaunchExit // the transport cannot find its marker: it retires the worker
		}
		if fields[1] == statesKey { // states.go
			switch fields[2] {
			case statesVerb:
				s.answerStates(fields[0], fields[3])
				continue
			case lookVerb:
				s.answerLooks(fields[0], fields[3])
				continue
			}
		}
		next, batched := strings.CutPrefix(fields[2], BatchedPrefix)
		if batched && (s.failed || s.hungUp()) {
			// A batch's command after one that did not succeed, or
			// whose controller is gone: not run (batch.go).
			io.WriteString(s.out, fields[0]+":"+NotRunStatus+":0\n")
			io.WriteString(s.errs, fields[0]+"\n")
			s.failed = true
			continue
		}
		status, bg, key, r := s.run(fields[3])
		s.failed = status != 0
		s.mark(fields[0], "", status, bg)
		if next != "0" && key != "" && !queued(rd) {
			s.startAhead(key, r)
		}
		if rf := s.confined[key]; rf != nil && rf.r.Compiles() != rf.compiles {
			rf.save() // compiled again: the next session need not; patched, at the end
		}
	}
}

// queued reports whether the next command's request has come already
// (a batch's, sent with the one just run): a shell started ahead would
// spare it no wait, and one confined otherwise would be ended unused (a
// fork, an exec and a confined thread on every host of a fan-out whose
// batch goes from the safe level to medium). A states or look request
// (sent behind a command) is not a command's: the shell is started ahead
// of the next round trip's.
func queued(rd *bufio.Reader) bool {
	n := rd.Buffered()
	if n == 0 {
		return false
	}
	b, _ := rd.Peek(n)
	// "NONCE = ": the key is the second word.
	for i, c := range b {
		if c == ' ' || c == '\n' {
			rest := b[i+1:]
			return c == '\n' || len(rest) < len(statesKey)+1 || string(rest[:len(statesKey)+1]) != statesKey+" "
		}
	}
	return true
}

// aheadMax is the longest request handed to a shell started ahead (it
// reads its request a byte at a time); longer ones start their own.
const aheadMax = 4096

type server struct {
	wrapper   string
	self      []string // the launcher's own argv prefix, as a WRAP names it
	out, errs *os.File
	devnull   *os.File
	confined  map[string]*rulesFiles // by the rules files, NUL-joined
	child     string                 // the script of a shell started ahead: its request from stdin, then the wrapper
	held      string                 // the script of a confined command's shell: a go-ahead from stdin, then the wrapper
	next      *ahead                 // the shell started ahead, if any
	failed    bool                   // the last command did not run or exited non-zero
	inFd      int                    // Serve's input's descriptor, -1 when hungUp cannot ask it
	rd        *bufio.Reader          // Serve's input: the requests read in and not yet run (queuedRules)
}

// ahead is a shell started before its command, waiting for its request
// on in.
type ahead struct {
	pid int
	in  *os.File
	key string      // its confinement: "-" for none, else its rules files
	r   *Restrictor // nil when unconfined
	gen int         // the generation of r's rules it runs under (Restrictor.Ahead)
	tid int         // the confined thread that started it (held)
}

// drop ends a shell started ahead unused: at the end of its input it
// exits.
func (a *ahead) drop() {
	a.in.Close()
	go reap(a.pid)
}

// mark prints the end markers of nonce (after before on stdout).
func (s *server) mark(nonce, before string, status int, bg bool) {
	b := "0"
	if bg {
		b = "1"
	}
	io.WriteString(s.out, before+nonce+":"+strconv.Itoa(status)+":"+b+"\n")
	io.WriteString(s.errs, nonce+"\n")
}

// fail reports why a command did not run: its status is LaunchExit.
func (s *server) fail(msg string) (int, bool) {
	io.WriteString(s.errs, LaunchPrefix+msg+"\n")
	return LaunchExit, false
}

// run runs one request's words: the status, whether its group lingers,
// and the confinement a shell started ahead for the next command would
// have (key "" for none: another wrapper).
func (s *server) run(req string) (status int, bg bool, key string, r *Restrictor) {
	a := s.next
	s.next = nil
	words, ends, err := parseRequest(req)
	if err != nil || len(words) < 3 {
		if a != nil {
			a.drop()
		}
		status, bg = s.fail("serve: a bad request")
		return status, bg, "", nil
	}
	argv := append([]string{"/bin/sh", "-c", s.wrapper, "sh"}, words...)
	files, confined := s.rulesOf(words[3:])
	switch {
	case confined:
		if r, err = s.restrictor(files); err != nil {
			if a != nil {
				a.drop()
			}
			status, bg = s.fail("not confined, not run: " + err.Error())
			return status, bg, "", nil
		}
		key = strings.Join(files, "\x00")
		argv = argv[:4+3] // the shell starts confined: no launcher after it
	case len(words) == 3:
		key = "-"
	}
	// The shell started ahead keeps CMD DIR PIDNONCE alone (it runs
	// confined already, no launcher after it): the wrapper's words are
	// not sent, so that it reads (a byte at a time: dash has no read -N)
	// some 50 bytes for `true` rather than 250.
	pid := s.handOver(a, key, r, requestHead(req, ends, 3))
	if pid == 0 {
		if r == nil {
			pid, _, _, err = s.start(argv, s.devnull, nil, false)
		} else {
			pid, err = s.startHeld(argv, r)
		}
		if err != nil {
			status, bg = s.fail(err.Error())
			return status, bg, "", nil
		}
	}
	status, bg = s.wait(pid)
	return status, bg, key, r
}

// heldLimit bounds the wait for a confined thread to end.
const heldLimit = time.Second

// startHeld starts a confined command's shell holding it until the
// thread that forked it has ended. That thread shares the command's
// Landlock domain, and a domain may signal its own: a command that ran
// while the thread lived could stop or kill the worker by the thread's
// ID (docs/decisions.md). The shell waits for a go-ahead on a pipe
// before it runs the wrapper.
func (s *server) startHeld(argv []string, r *Restrictor) (int, error) {
	in, w, err := os.Pipe()
	if err != nil {
		return 0, errors.New("serve: " + err.Error())
	}
	argv = append([]string{"/bin/sh", "-c", s.held}, argv[3:]...)
	pid, _, tid, err := s.start(argv, in, r, false)
	in.Close()
	if err != nil {
		w.Close()
		return 0, err
	}
	if !threadGone(tid, heldLimit) {
		w.Close() // no go-ahead: the shell exits at the end of its input
		reap(pid)
		return 0, errors.New("not run: the thread that confined it did not end")
	}
	_, err = io.WriteString(w, "\n")
	w.Close()
	if err != nil {
		reap(pid)
		return 0, errors.New("serve: " + err.Error())
	}
	return pid, nil
}

// handOver gives req to a, the shell started ahead, when it is confined
// as key says and its rules still hold, and returns its PID; else it
// ends a and returns 0.
func (s *server) handOver(a *ahead, key string, r *Restrictor, req string) int {
	if a == nil {
		return 0
	}
	ok := a.key == key && key != "" && len(req) <= aheadMax
	if ok && r != nil {
		ok, _ = r.Current(a.gen)
		ok = ok && threadGone(a.tid, heldLimit) // long gone, but not assumed so
	}
	if ok {
		_, err := io.WriteString(a.in, req+"\n")
		ok = err == nil
	}
	if !ok {
		a.drop()
		return 0
	}
	a.in.Close()
	return a.pid
}

// start starts argv with stdin, Serve's stdout and stderr, in a process
// group of its own, on a thread confined by r when r is not nil (its
// rules checked first unless ahead: then gen is their generation), and
// returns its PID. Its error says whether the command was confined.
//
// syscall.ForkExec, not os.StartProcess: that stats its Dir, which links
// time's formatting into the launcher (~90 KB; docs/decisions.md, "The
// launcher kept small"). It is the same fork and exec from the calling
// thread (a confined one's Landlock domain and no_new_privs carried into
// the command), with the process's environment, as os would give it.
func (s *server) start(argv []string, stdin *os.File, r *Restrictor, ahead bool) (pid, gen, tid int, err error) {
	env := syscall.Environ()
	if r != nil {
		env = stepEnviron(env) // confined: no secret-named variable (env.go)
	}
	attr := &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{stdin.Fd(), s.out.Fd(), s.errs.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	if r == nil {
		if pid, err = syscall.ForkExec(argv[0], argv, attr); err != nil {
			return 0, 0, 0, errors.New("serve: fork/exec " + argv[0] + ": " + err.Error())
		}
		return pid, 0, 0, nil
	}
	run := func() { tid = threadID(); pid, err = syscall.ForkExec(argv[0], argv, attr) }
	var derr error
	if ahead {
		gen, derr = r.Ahead(run)
	} else {
		derr = r.Do(run)
	}
	if derr != nil {
		err = derr
	}
	if err != nil {
		return 0, 0, 0, errors.New("not confined, not run: " + err.Error())
	}
	return pid, gen, tid, nil
}

// startAhead starts the next command's shell, confined as key and r say.
func (s *server) startAhead(key string, r *Restrictor) {
	in, w, err := os.Pipe()
	if err != nil {
		return
	}
	// Under the rules as they are: Current checks them when a request
	// comes (a stale ruleset is compiled then, if a command of its level
	// comes at all).
	pid, gen, tid, err := s.start([]string{"/bin/sh", "-c", s.child, "sh"}, in, r, true)
	in.Close()
	if err != nil {
		w.Close()
		return
	}
	s.next = &ahead{pid: pid, in: w, key: key, r: r, gen: gen, tid: tid}
}

// wait waits for the command pid and reports its status as a shell
// would, and whether processes of its group are still there.
func (s *server) wait(pid int) (int, bool) {
	ws, err := reap(pid)
	if err != nil {
		return s.fail("serve: wait: " + err.Error())
	}
	status := ws.ExitStatus()
	if ws.Signaled() {
		status = 128 + int(ws.Signal())
	}
	return status, syscall.Kill(-pid, 0) == nil
}

// reap waits for the child pid to end.
func reap(pid int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return ws, err
		}
	}
}

// rulesOf returns the rules files of wrap when it is this launcher
// confining to them (self RulesFlag FILE... --), and false otherwise.
func (s *server) rulesOf(wrap []string) ([]string, bool) {
	if len(s.self) == 0 || len(wrap) < len(s.self)+3 || !slices.Equal(wrap[:len(s.self)], s.self) || wrap[len(wrap)-1] != "--" {
		return nil, false
	}
	var files []string
	for rest := wrap[len(s.self) : len(wrap)-1]; len(rest) > 0; rest = rest[2:] {
		if len(rest) < 2 || rest[0] != RulesFlag {
			return nil, false
		}
		files = append(files, rest[1])
	}
	return files, true
}

// rulesFiles is a Restrictor built from rules files, the generation of
// its rules last written back to them and its count of compilations
// then.
type rulesFiles struct {
	r        *Restrictor
	files    []string
	saved    int
	compiles int
}

// save writes back the rules the Restrictor compiled again or patched
// since they were read or last saved (best effort, as the launcher
// does): kept on the host (the default), stale rules would otherwise be
// compiled again by every later session's first command. Serve saves
// after a command whose rules were compiled again (seldom, and costly to
// do again), else at the end of the session: rules patched for a new
// entry in /tmp, as on a busy host between most commands, would be
// written (~200 KB) after each, and each writing moves the time of the
// launcher's directory, which the rules watch (agent's state lies in the
// home, searched for links) — the next commands' checks read its
// hundreds of entries again (docs/bench.md).
func (rf *rulesFiles) save() {
	gen, rss := rf.r.Rules()
	rf.compiles = rf.r.Compiles()
	if gen == rf.saved || len(rss) != len(rf.files) {
		return
	}
	for i, f := range rf.files {
		WriteRuleset(f, rss[i])
	}
	rf.saved = gen
}

// restrictor is the Restrictor of files, built on first use. A failed
// build is not kept: the next command tries again.
//
// The rules of the requests already read in behind this one (a batch's:
// the plan's other levels) that have none yet are built with it, their
// paths opened once for all (NewRestrictors); those that cannot be read
// or built are left to their own request.
func (s *server) restrictor(files []string) (*Restrictor, error) {
	key := strings.Join(files, "\x00")
	if rf, ok := s.confined[key]; ok {
		return rf.r, nil
	}
	rss, err := readRulesets(files)
	if err != nil {
		return nil, err
	}
	sets, named := [][]Ruleset{rss}, [][]string{files}
	for _, more := range s.queuedRules(key) {
		if rss, err := readRulesets(more); err == nil {
			sets, named = append(sets, rss), append(named, more)
		}
	}
	if len(sets) > 1 {
		if rs, err := NewRestrictors(sets...); err == nil {
			for i, r := range rs {
				s.confined[strings.Join(named[i], "\x00")] = &rulesFiles{r: r, files: named[i]}
			}
			return rs[0], nil
		}
	}
	r, err := NewRestrictor(rss...)
	if err != nil {
		return nil, err
	}
	s.confined[key] = &rulesFiles{r: r, files: files}
	return r, nil
}

// readRulesets reads the rules files.
func readRulesets(files []string) ([]Ruleset, error) {
	rss := make([]Ruleset, len(files))
	for i, f := range files {
		rs, err := ReadRuleset(f)
		if err != nil {
			return nil, err
		}
		rss[i] = rs
	}
	return rss, nil
}

// queuedRules are the rules files of the whole requests read in and not
// yet run whose confinement is this launcher's, other than key's and
// those built already, each once.
func (s *server) queuedRules(key string) [][]string {
	if s.rd == nil || s.rd.Buffered() == 0 {
		return nil
	}
	b, _ := s.rd.Peek(s.rd.Buffered())
	rest := string(b)
	seen := map[string]bool{key: true}
	var out [][]string
	for {
		line, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return out // a partial line: not a request yet
		}
		rest = after
		fields := strings.SplitN(line, " ", 4)
		if len(fields) != 4 || fields[1] == statesKey {
			continue
		}
		words, _, err := parseRequest(fields[3])
		if err != nil || len(words) < 3 {
			continue
		}
		files, confined := s.rulesOf(words[3:])
		k := strings.Join(files, "\x00")
		if _, built := s.confined[k]; confined && !built && !seen[k] {
			seen[k] = true
			out = append(out, files)
		}
	}
}

func (s *server) close() {
	if s.next != nil {
		s.next.drop()
	}
	for _, rf := range s.confined {
		rf.save()
		rf.r.Close()
	}
}

// ParseRequest splits a line of words quoted for a POSIX shell as the SSH
// transport quotes them: each word a run of single-quoted strings,
// backslash-escaped characters and "$agent_nl" (a newline), words
// separated by one space.
func ParseRequest(line string) ([]string, error) {
	words, _, err := parseRequest(line)
	return words, err
}

// requestHead is the part of a request line (which ParseRequest read as
// words, ending at ends) that holds its first n words.
func requestHead(line string, ends []int, n int) string {
	if n >= len(ends) {
		return line
	}
	return line[:ends[n-1]]
}

// parseRequest is ParseRequest that also says where in line each word
// ends.
func parseRequest(line string) ([]string, []int, error) {
	var words []string
	var ends []int
	var w strings.Builder
	in := false // within a word
	for i := 0; i < len(line); {
		switch c := line[i]; c {
		case ' ':
			if !in {
				return nil, nil, errors.New("request: an empty word")
			}
			words, ends, in = append(words, w.String()), append(ends, i), false
			w.Reset()
			i++
			continue
		case '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, nil, errors.New("request: an unterminated quote")
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 2
		case '\\':
			if i+1 >= len(line) {
				return nil, nil, errors.New("request: a backslash at the end")
			}
			w.WriteByte(line[i+1])
			i += 2
		case '"':
			const nl = `"$agent_nl"`
			if !strings.HasPrefix(line[i:], nl) {
				return nil, nil, errors.New("request: a double quote that is not a newline")
			}
			w.WriteByte('\n')
			i += len(nl)
		default:
			return nil, nil, errors.New("request: an unquoted character")
		}
		in = true
	}
	if in {
		words, ends = append(words, w.String()), append(ends, len(line))
	} else if len(line) > 0 {
		return nil, nil, errors.New("request: a trailing space")
	}
	return words, ends, nil
}
