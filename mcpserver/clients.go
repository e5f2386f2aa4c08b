package mcpserver

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
)

// client is what the server keeps for one MCP session: its own approver,
// so that an "always" one client gave never approves a step of another,
// and a question one client leaves open never holds up another's.
type client struct {
	approve *safety.Approver
	// scope is the client's agent session: its changes are journaled
	// under it, on each host, and its undo puts back only them.
	scope string
}

// clients are the sessions' clients, forgotten when a session ends.
type clients struct {
	mode safety.Mode
	// ended is called when a client's session ends.
	ended func(*client)
	mu    sync.Mutex
	m     map[*mcp.ServerSession]*client
	anon  *client // calls without a session
}

// of returns ss's client, made on its first call (nil ss, a call without
// a session: a client of its own that cannot be asked).
func (cs *clients) of(ss *mcp.ServerSession) *client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if ss == nil {
		if cs.anon == nil {
			cs.anon = &client{approve: safety.NewApprover(cs.mode, nil), scope: statedir.NewSessionID()}
		}
		return cs.anon
	}
	if c, ok := cs.m[ss]; ok {
		return c
	}
	c := &client{approve: safety.NewApprover(cs.mode, elicitPrompter{}), scope: statedir.NewSessionID()}
	if cs.m == nil {
		cs.m = map[*mcp.ServerSession]*client{}
	}
	cs.m[ss] = c
	go func() {
		_ = ss.Wait()
		cs.mu.Lock()
		delete(cs.m, ss)
		cs.mu.Unlock()
		if cs.ended != nil {
			cs.ended(c)
		}
	}()
	return c
}

// count is the number of clients with a live session.
func (cs *clients) count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}

// Headers the HTTP handler sets on each request for the calls it carries
// (any the client sent are removed first): which POST carried a call, and
// the peer's address.
const (
	postHeader = "X-Agent-Mcp-Post"
	peerHeader = "X-Agent-Mcp-Peer"
)

// posts links a call to the HTTP POST that carried it: when that request
// ends before the call (the client closed the connection), the call is
// cancelled. The SDK keeps a call running after its POST is gone (for
// protocol versions before 2026-07-28), and without an event store its
// result could never be delivered.
type posts struct {
	mu   sync.Mutex
	n    uint64
	live map[string]context.Context
}

// serve passes r to h, registered as a live POST.
func (p *posts) serve(w http.ResponseWriter, r *http.Request, h http.Handler) {
	r.Header.Del(postHeader)
	r.Header.Del(peerHeader)
	peer := r.RemoteAddr
	if peer == "" || peer == "@" { // a unix socket's peer has no address
		peer = "unix socket"
	}
	r.Header.Set(peerHeader, peer)
	if r.Method != http.MethodPost {
		h.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	p.n++
	id := strconv.FormatUint(p.n, 10)
	if p.live == nil {
		p.live = map[string]context.Context{}
	}
	p.live[id] = r.Context()
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.live, id)
		p.mu.Unlock()
	}()
	r.Header.Set(postHeader, id)
	h.ServeHTTP(w, r)
}

// bind returns ctx cancelled also when the POST that carried the call
// ends; calls that came another way (stdio) get ctx as it is.
func (p *posts) bind(ctx context.Context, extra *mcp.RequestExtra) (context.Context, context.CancelFunc) {
	if extra == nil || extra.Header == nil || extra.Header.Get(postHeader) == "" {
		return context.WithCancel(ctx)
	}
	p.mu.Lock()
	post, ok := p.live[extra.Header.Get(postHeader)]
	p.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	if !ok {
		cancel() // the POST has ended already
		return ctx, cancel
	}
	stop := context.AfterFunc(post, cancel)
	return ctx, func() { stop(); cancel() }
}

// running are the calls in progress, cancelled all at once when the
// server stops.
type running struct {
	mu      sync.Mutex
	n       uint64
	cancels map[uint64]context.CancelFunc
	stopped bool
	wg      sync.WaitGroup
}

// begin starts a call: its context ends when the server stops, the
// carrying POST ends, the client cancels or leaves. end must be called.
func (s *Server) begin(ctx context.Context, req *mcp.CallToolRequest) (_ context.Context, end func()) {
	ctx = audit.WithPrincipal(ctx, principal(req))
	ctx, cancel := s.calls.bind(ctx, req.Extra)
	r := &s.running
	r.mu.Lock()
	if r.stopped {
		cancel()
	}
	r.n++
	id := r.n
	if r.cancels == nil {
		r.cancels = map[uint64]context.CancelFunc{}
	}
	r.cancels[id] = cancel
	r.wg.Add(1)
	r.mu.Unlock()
	return ctx, func() {
		cancel()
		r.mu.Lock()
		delete(r.cancels, id)
		r.mu.Unlock()
		r.wg.Done()
	}
}

// stop cancels every running call and waits for them to end (their
// commands killed) for up to wait.
func (r *running) stop(wait time.Duration) {
	r.mu.Lock()
	r.stopped = true
	for _, c := range r.cancels {
		c()
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
	}
}

// principal is who a call's audit lines name: the OS user the server
// runs as, the client's name and version as it said at initialize, and
// over HTTP the peer's address.
func principal(req *mcp.CallToolRequest) string {
	p := audit.OSUser() + " via mcp"
	if ss := req.Session; ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			p += " " + strings.ToValidUTF8(ip.ClientInfo.Name, "?")
			if ip.ClientInfo.Version != "" {
				p += "/" + strings.ToValidUTF8(ip.ClientInfo.Version, "?")
			}
		}
	}
	if req.Extra != nil && req.Extra.Header != nil {
		if peer := req.Extra.Header.Get(peerHeader); peer != "" {
			p += " from " + peer
		}
	}
	if len(p) > 256 {
		p = strings.ToValidUTF8(p[:256], "")
	}
	return p
}
