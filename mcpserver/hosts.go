package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// pool keeps one open engine.Host per host name across calls. Calls to
// one host share its connection, each with its own executor (a worker:
// executors are not safe for concurrent use); calls to different hosts
// run in parallel. A connection unused for IdleTimeout is closed. A dead
// connection is redialled once by the SSH transport itself.
type pool struct {
	s        *Server
	mu       sync.Mutex
	conns    map[string]*hostConn
	sessions map[string]string // a host's session, after an undo gave it a new one
	owners   map[string]string // those sessions' client scopes
	base     string            // the session of every other host
	closed   bool
	stop     chan struct{}
	// recs are the sessions' records (agent sessions lists them), made
	// at a session's first connection; labels say who each scope is.
	recs   map[string]*session.Log
	labels map[string]string
}

// hostConn is one host's open Host, shared by the calls to it.
type hostConn struct {
	name  string
	ready chan struct{} // closed once dialled (h or err set)
	h     *engine.Host
	err   error

	mu      sync.Mutex // guards the fields below
	free    []*worker
	busy    int
	last    time.Time
	retired bool // taken out of the pool: closed when the last call ends
}

func newPool(s *Server) *pool {
	p := &pool{s: s, conns: map[string]*hostConn{}, sessions: map[string]string{}, owners: map[string]string{},
		base: statedir.NewSessionID(), stop: make(chan struct{}), recs: map[string]*session.Log{}, labels: map[string]string{}}
	go p.reap(s.o.IdleTimeout)
	return p
}

// poolKey is a connection's key: a client's scope (its agent session:
// each MCP client's changes are journaled, and undone, apart) and the
// host's name.
func poolKey(scope, host string) string { return scope + "\x00" + host }

// splitKey is poolKey's inverse.
func splitKey(key string) (scope, host string) {
	scope, host, ok := strings.Cut(key, "\x00")
	if !ok {
		return "", key
	}
	return scope, host
}

// session is the session of the next changes through key.
func (p *pool) session(key string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessionLocked(key)
}

func (p *pool) sessionLocked(key string) string {
	if id, ok := p.sessions[key]; ok {
		return id
	}
	scope, _ := splitKey(key)
	return cmp.Or(scope, p.base)
}

// worker is an executor of a host's (engine.Host.Worker) and where the
// output of the call using it goes.
type worker struct {
	exec *executor.Executor
	out  atomic.Pointer[func(string)] // the running call's, nil when none
}

// emit passes a running command's output to the call, if it wants it.
func (w *worker) emit(ev event.Event) {
	if ev.Kind != event.KindOutput || ev.Output == nil {
		return
	}
	if f := w.out.Load(); f != nil {
		(*f)(ev.Output.Data)
	}
}

// lease is a call's use of a host: its Host and an executor of its own.
type lease struct {
	c    *hostConn
	w    *worker
	exec *executor.Executor
	p    *pool
}

// output sends the output of the lease's commands to f (nil: nowhere).
func (l *lease) output(f func(string)) {
	if f == nil {
		l.w.out.Store(nil)
		return
	}
	l.w.out.Store(&f)
}

// Host is the leased host.
func (l *lease) Host() *engine.Host { return l.c.h }

// approveBy makes c's approver decide the lease's steps.
func (l *lease) approveBy(c *client) {
	l.exec.SetGuard(func(ctx context.Context, req safety.Request) (safety.Decision, bool, error) {
		d, err := c.approve.Decide(ctx, req)
		return d, true, err
	})
}

// release gives the executor back; a retired connection closes with its
// last call.
func (l *lease) release() {
	c := l.c
	c.mu.Lock()
	if l.w != nil {
		l.w.out.Store(nil)
		l.w.exec.SetGuard(nil)
		c.free = append(c.free, l.w)
	}
	c.busy--
	c.last = time.Now()
	closeNow := c.retired && c.busy == 0
	c.mu.Unlock()
	if closeNow {
		c.h.Close()
	}
}

// acquire returns a lease on the host named name, dialling it when no
// open connection exists. A failed dial is not kept: the next call dials
// again.
func (p *pool) acquire(ctx context.Context, name string) (*lease, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("server is shutting down")
	}
	c, ok := p.conns[name]
	if !ok {
		c = &hostConn{name: name, ready: make(chan struct{})}
		p.conns[name] = c
		go p.dial(c, p.sessionLocked(name))
	}
	c.mu.Lock()
	c.busy++
	c.mu.Unlock()
	p.mu.Unlock()
	l := &lease{c: c, p: p}
	select {
	case <-c.ready:
	case <-ctx.Done():
		l.drop()
		return nil, ctx.Err()
	}
	if c.err != nil {
		l.drop()
		return nil, c.err
	}
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		l.w, c.free = c.free[n-1], c.free[:n-1]
	}
	c.mu.Unlock()
	if l.w == nil {
		l.w = &worker{}
		l.w.exec = c.h.Worker(nil, l.w.emit)
	}
	l.exec = l.w.exec
	return l, nil
}

// drop ends a lease that got no executor.
func (l *lease) drop() {
	c := l.c
	c.mu.Lock()
	c.busy--
	closeNow := c.retired && c.busy == 0 && c.h != nil
	c.mu.Unlock()
	if closeNow {
		c.h.Close()
	}
}

// dialTimeout bounds a dial that ssh_config's ConnectTimeout does not.
const dialTimeout = 2 * time.Minute

// dial opens the host for c, whoever waits for it: a caller that gives up
// does not cancel it for the others.
func (p *pool) dial(c *hostConn, session string) {
	defer close(c.ready)
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	_, host := splitKey(c.name)
	t, err := p.s.target(host)
	var hb *engine.HostBecome
	if err == nil {
		// Every step becomes when the server (-b) or the inventory
		// (ansible_become) says so; undo restores as the journal says.
		hb, err = engine.ResolveBecome(t, p.s.o.Become)
	}
	if err == nil {
		c.h, err = engine.Open(ctx, t, engine.DialOptions{SSH: sshtr.Options{Warn: p.s.o.Warn}}, engine.HostOptions{
			Policy: p.s.o.Policy, Approver: p.s.approve, Session: session,
			Secrets: engine.SecretValues(t.Vars), Redact: p.s.secrets, Become: hb,
			Record: p.record(session, c.name),
		})
	}
	if err != nil {
		c.err = fmt.Errorf("host %s: %w", host, err)
		p.mu.Lock()
		if p.conns[c.name] == c {
			delete(p.conns, c.name)
		}
		p.mu.Unlock()
	}
}

// retire takes the host's connection out of the pool (it closes when its
// calls end) and gives the host a new session: after an undo its journal
// is closed for changes (journal.Journal), so later changes start anew.
func (p *pool) retire(name string, newSession bool) {
	p.mu.Lock()
	c := p.conns[name]
	delete(p.conns, name)
	if newSession {
		id := statedir.NewSessionID()
		p.sessions[name] = id
		sc, _ := splitKey(name)
		p.owners[id] = sc
	}
	p.mu.Unlock()
	if c == nil {
		return
	}
	<-c.ready
	c.mu.Lock()
	c.retired = true
	closeNow := c.busy == 0 && c.h != nil
	c.mu.Unlock()
	if closeNow {
		c.h.Close()
	}
}

// owns reports whether the session id is one the client scope's changes
// went to.
func (p *pool) owns(scope, id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return id == scope || p.owners[id] == scope
}

// retireScope retires the connections of a client that has gone (each
// closes when its last call ends).
func (p *pool) retireScope(scope string) {
	p.mu.Lock()
	var keys []string
	for k := range p.conns {
		if sc, _ := splitKey(k); sc == scope {
			keys = append(keys, k)
		}
	}
	ended := map[string]bool{scope: true}
	for k, id := range p.sessions {
		if sc, _ := splitKey(k); sc == scope {
			delete(p.sessions, k)
			ended[id] = true
		}
	}
	delete(p.labels, scope)
	p.mu.Unlock()
	for _, k := range keys {
		p.retire(k, false)
	}
	p.endRecords(ended)
}

// reap closes connections idle for longer than idle, checking every
// idle/4 (at least every second).
func (p *pool) reap(idle time.Duration) {
	t := time.NewTicker(max(idle/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			var old []string
			p.mu.Lock()
			for name, c := range p.conns {
				c.mu.Lock()
				if c.busy == 0 && !c.last.IsZero() && now.Sub(c.last) > idle {
					old = append(old, name)
				}
				c.mu.Unlock()
			}
			p.mu.Unlock()
			for _, name := range old {
				p.retireIdle(name, idle)
			}
		}
	}
}

// retireIdle retires the host's connection if it is still idle.
func (p *pool) retireIdle(name string, idle time.Duration) {
	p.mu.Lock()
	c := p.conns[name]
	if c == nil {
		p.mu.Unlock()
		return
	}
	c.mu.Lock()
	idleNow := c.busy == 0 && time.Since(c.last) > idle
	if idleNow {
		c.retired = true
		delete(p.conns, name)
	}
	c.mu.Unlock()
	p.mu.Unlock()
	if idleNow {
		c.h.Close()
	}
}

// open counts the open connections (for tests and the idle reaper's
// checks).
func (p *pool) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// label names who the scope (a client) is, for its sessions' records.
func (p *pool) label(scope, who string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.labels[scope]; !ok {
		p.labels[scope] = who
	}
}

// record is session id's record, made at its first connection (key: the
// pool key that dialled): `agent sessions` lists the client's calls, and
// `agent undo ID` puts back their changes. nil when it cannot be made
// (said once as a warning); the calls still run and are journaled.
func (p *pool) record(id, key string) *session.Log {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.recs[id]; ok {
		return l
	}
	scope, host := splitKey(key)
	dir, err := statedir.Dir()
	var l *session.Log
	if err == nil {
		wd, _ := os.Getwd()
		l, err = session.Create(dir, id, session.Start{Kind: session.KindMCP, Target: host, Client: p.labels[scope],
			Args: []string{"mcp"}, Dir: wd})
		l.NoSync() // nobody resumes an MCP session (session.Log.NoSync)
	}
	if err != nil && p.s.o.Warn != nil {
		p.s.o.Warn(fmt.Sprintf("session %s: no record for agent sessions: %v", id, err))
	}
	p.recs[id] = l
	return l
}

// endRecords ends the records of the sessions ids (all when nil).
func (p *pool) endRecords(ids map[string]bool) {
	p.mu.Lock()
	var ls []*session.Log
	for id, l := range p.recs {
		if ids == nil || ids[id] {
			ls = append(ls, l)
			delete(p.recs, id)
		}
	}
	p.mu.Unlock()
	for _, l := range ls {
		if l != nil {
			l.End(session.StateDone)
		}
	}
}

// close closes every connection; calls still running end with errors.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.stop)
	conns := p.conns
	p.conns = map[string]*hostConn{}
	p.mu.Unlock()
	for _, c := range conns {
		<-c.ready
		if c.h != nil {
			c.h.Close()
		}
	}
	p.endRecords(nil)
}
