package mcpserver

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpSlack is what an HTTP request body may hold beyond MaxArgBytes (the
// JSON-RPC envelope); a larger body is refused by the SDK before it is
// read whole. Arguments between MaxArgBytes and this get the tool error.
const httpSlack = 1 << 20

// Handler serves the streamable HTTP transport. When token is not empty,
// every request must carry "Authorization: Bearer TOKEN"; any other gets
// 401 and reaches nothing.
func (s *Server) Handler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: int64(2*s.o.MaxArgBytes + httpSlack)})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agent mcp"`)
			http.Error(w, "agent mcp: missing or wrong bearer token (Authorization: Bearer $AGENT_MCP_TOKEN)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
