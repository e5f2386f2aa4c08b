package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpSlack is what an HTTP request body may hold beyond MaxArgBytes (the
// JSON-RPC envelope); a larger body is refused by the SDK before it is
// read whole. Arguments between MaxArgBytes and this get the tool error.
const httpSlack = 1 << 20

// HTTPOptions say who may use the streamable HTTP handler.
type HTTPOptions struct {
	// Token is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN", the scheme in any case). Empty is
	// allowed only with NoAuth.
	Token string
	// NoAuth serves without a token: only for a listener that checks its
	// peers itself (a unix socket of the operator's uid), or the operator's
	// explicit --insecure-no-auth on loopback.
	NoAuth bool
	// Origins are the browser origins allowed besides a loopback origin
	// with the server's own port ("http://localhost:8765"); a request
	// without Origin is allowed (not a browser's).
	Origins []string
	// SessionTimeout ends an HTTP session that made no request for this
	// long, releasing what it held (default DefaultSessionTimeout).
	SessionTimeout time.Duration
}

// DefaultSessionTimeout ends an idle HTTP session.
const DefaultSessionTimeout = 30 * time.Minute

// ErrNoToken is Handler's refusal to serve without a credential.
var ErrNoToken = errors.New("mcp over HTTP needs a bearer token (or NoAuth for a peer-checked listener)")

// Handler serves the streamable HTTP transport: a request with a foreign
// Origin gets 403, one without the bearer token 401, and neither reaches
// the server. The SDK refuses a loopback request whose Host is not
// loopback (DNS rebinding). A call whose POST ends before its result (the
// client went away) is cancelled: its command killed, its question
// answered "declined".
func (s *Server) Handler(o HTTPOptions) (http.Handler, error) {
	if o.Token == "" && !o.NoAuth {
		return nil, ErrNoToken
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	origins := map[string]bool{}
	for _, or := range o.Origins {
		n, err := normOrigin(or)
		if err != nil {
			return nil, fmt.Errorf("allowed origin %q: %w", or, err)
		}
		origins[n] = true
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: int64(2*s.o.MaxArgBytes + httpSlack), SessionTimeout: o.SessionTimeout})
	want := sha256.Sum256([]byte(o.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !originAllowed(r, origins) {
			http.Error(w, "agent mcp: Origin "+r.Header.Get("Origin")+" is not allowed", http.StatusForbidden)
			return
		}
		if !o.NoAuth && !bearerOK(r.Header.Values("Authorization"), want) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agent mcp"`)
			http.Error(w, "agent mcp: missing or wrong bearer token (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
			return
		}
		s.calls.serve(w, r, h)
	}), nil
}

// bearerOK reports whether the one Authorization header is "Bearer TOKEN"
// with the wanted token (whose SHA-256 is want): the scheme in any case
// (RFC 7235), compared in constant time over digests of equal length.
func bearerOK(vals []string, want [sha256.Size]byte) bool {
	if len(vals) != 1 {
		return false
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// originAllowed: no Origin (not a browser), a listed one, or a loopback
// origin with the port the request came in on.
func originAllowed(r *http.Request, allowed map[string]bool) bool {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 {
		return true
	}
	if len(vals) > 1 {
		return false
	}
	n, err := normOrigin(vals[0])
	if err != nil {
		return false
	}
	if allowed[n] {
		return true
	}
	u, _ := url.Parse(n)
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopbackName(u.Hostname()) {
		return false
	}
	_, port, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	up := u.Port()
	if up == "" {
		up = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return up == port
}

// normOrigin is an origin as scheme://host[:port], lower case; anything
// else (a path, user info, "null", another scheme) is an error.
func normOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("not an http(s) origin")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// loopbackName reports whether host names only this machine.
func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
