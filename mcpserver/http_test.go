package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/safety"
)

const testToken = "0123456789abcdef-test-token"

// httpServer serves a Server's handler on a loopback port.
func httpServer(t *testing.T, o HTTPOptions) (*Server, *httptest.Server) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, err := New(Options{Policy: safety.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	h, err := s.Handler(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return s, hs
}

// post sends an initialize request with the headers and returns the
// status.
func post(t *testing.T, url string, hdr map[string]string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestHTTPAuthAndOrigin: a token is required, in constant time, with the
// scheme in any case; a foreign Origin is refused, a loopback origin of
// the server's own port and a listed one are served; no token without
// NoAuth is an error.
func TestHTTPAuthAndOrigin(t *testing.T) {
	_, hs := httpServer(t, HTTPOptions{Token: testToken, Origins: []string{"https://ide.example:8443"}})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(hs.URL, "http://"))
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", nil, 401},
		{"wrong token", map[string]string{"Authorization": "Bearer " + testToken + "x"}, 401},
		{"prefix of the token", map[string]string{"Authorization": "Bearer " + testToken[:10]}, 401},
		{"basic", map[string]string{"Authorization": "Basic " + testToken}, 401},
		{"token alone", map[string]string{"Authorization": testToken}, 401},
		{"Bearer", map[string]string{"Authorization": "Bearer " + testToken}, 200},
		{"bearer", map[string]string{"Authorization": "bearer " + testToken}, 200},
		{"BEARER", map[string]string{"Authorization": "BEARER " + testToken}, 200},
		{"foreign origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://evil.example"}, 403},
		{"foreign origin, no token", map[string]string{"Origin": "http://evil.example"}, 403},
		{"loopback origin, other port", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://127.0.0.1:1"}, 403},
		{"null origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "null"}, 403},
		{"loopback origin, same port", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://localhost:" + port}, 200},
		{"listed origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "https://IDE.example:8443"}, 200},
		{"same origin without token", map[string]string{"Origin": "http://127.0.0.1:" + port}, 401},
	} {
		if got := post(t, hs.URL, tc.hdr); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	s, err := New(Options{Policy: safety.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Handler(HTTPOptions{}); err == nil {
		t.Error("a handler without token or NoAuth")
	}
	if _, err := s.Handler(HTTPOptions{Token: "x", Origins: []string{"file:///x"}}); err == nil {
		t.Error("a file: origin was accepted")
	}
}

// bearerRT adds "<scheme> TOKEN" to every request.
type bearerRT struct{ scheme, token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.scheme+" "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPClientLowercaseBearer: the SDK's client sending "bearer" runs a
// tool; without the token it cannot connect.
func TestHTTPClientLowercaseBearer(t *testing.T) {
	_, hs := httpServer(t, HTTPOptions{Token: testToken})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(rt http.RoundTripper) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}
		return mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, tr, nil)
	}
	if cs, err := connect(http.DefaultTransport); err == nil {
		cs.Close()
		t.Fatal("connected without a token")
	}
	cs, err := connect(bearerRT{"bearer", testToken})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": "localhost-not-used", "command": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	// The host does not resolve: a tool error, which proves the call
	// reached the tool.
	if !res.IsError {
		t.Errorf("result %+v", res)
	}
}

// FuzzHTTPRequest sends arbitrary requests through the handler: it never
// panics, a request without the token never gets past 401/403, and the
// server still serves a good request afterwards.
func FuzzHTTPRequest(f *testing.F) {
	f.Add("POST", "Bearer "+testToken, "", "application/json", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	f.Add("POST", "bearer "+testToken, "http://localhost", "application/json", []byte(`[{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call"}]`))
	f.Add("GET", "", "null", "", []byte(nil))
	f.Add("DELETE", "Bearer", "http://evil.example", "text/plain", []byte("\x00\xff"))
	f.Add("POST", "Bearer "+testToken, "", "application/json", []byte(`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`))
	s, err := New(Options{Policy: safety.DefaultPolicy()})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	h, err := s.Handler(HTTPOptions{Token: testToken})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, method, auth, origin, ctype string, body []byte) {
		if !validMethod(method) {
			return
		}
		r := httptest.NewRequest(method, "http://127.0.0.1:8765/mcp", bytes.NewReader(body))
		for k, v := range map[string]string{"Authorization": auth, "Origin": origin, "Content-Type": ctype} {
			if v != "" && validHeader(v) {
				r.Header.Set(k, v)
			}
		}
		r.Header.Set("Accept", "application/json, text/event-stream")
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		r = r.WithContext(ctx)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		authorized := bearerOK(r.Header.Values("Authorization"), sha256Of(testToken))
		if !authorized && w.Code != 401 && w.Code != 403 {
			t.Fatalf("unauthorized %s got %d", method, w.Code)
		}
	})
}

func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

func validHeader(v string) bool {
	for _, c := range []byte(v) {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func sha256Of(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// TestHTTPIdleSessionEnds: a session that makes no request for
// SessionTimeout is closed and its client state released; its next call
// fails, a new session is served.
func TestHTTPIdleSessionEnds(t *testing.T) {
	s, hs := httpServer(t, HTTPOptions{Token: testToken, SessionTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func() *mcp.ClientSession {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearerRT{"Bearer", testToken}}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"host": "no-such-host.invalid", "command": "true"}}); err != nil {
		t.Fatal(err)
	}
	if n := s.clients.count(); n != 1 {
		t.Fatalf("%d clients after a call", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.clients.count() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle session's client was not released")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Error("the ended session still served")
	}
	if _, err := connect().ListTools(ctx, nil); err != nil {
		t.Errorf("a new session: %v", err)
	}
}

// TestHTTPAbandonedSessionsReleased: 200 sessions that initialize, make a
// call and are never heard from again (no DELETE, connections dropped)
// leave neither client state nor goroutines once SessionTimeout passes:
// the server's goroutines come back to what they were before.
func TestHTTPAbandonedSessionsReleased(t *testing.T) {
	// Long enough that on a loaded machine (200 sessions took 9 s at load
	// 40) at least 50 are open at once.
	s, hs := httpServer(t, HTTPOptions{Token: testToken, SessionTimeout: 8 * time.Second})
	send := func(session, body string) (string, int) {
		req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.Header.Get("Mcp-Session-Id"), res.StatusCode
	}
	settle := func() int {
		time.Sleep(100 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	before := settle()
	most, peak := 0, 0 // clients and goroutines at once, at most
	for i := range 200 {
		id, code := send("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gone","version":"1"}}}`)
		if code != 200 || id == "" {
			t.Fatalf("session %d: initialize: %d %q", i, code, id)
		}
		send(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if _, code := send(id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_command","arguments":{"host":"127.0.0.1:1","command":"true"}}}`); code != 200 {
			t.Fatalf("session %d: call: %d", i, code)
		}
		most, peak = max(most, s.clients.count()), max(peak, runtime.NumGoroutine())
	}
	if most < 50 {
		t.Fatalf("at most %d clients at once: the timeout is too short to test", most)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := settle()
		if s.clients.count() == 0 && n <= before+5 {
			t.Logf("goroutines: %d before, %d with up to %d sessions, %d after", before, peak, most, n)
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d clients and %d goroutines (%d before) 30 s after 200 sessions were abandoned:\n%.8000s", s.clients.count(), n, before, buf)
		}
	}
}
