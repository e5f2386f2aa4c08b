package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client on stdin and stdout until its input ends
// or ctx does.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.ServeIO(ctx, os.Stdin, os.Stdout)
}

// ServeIO serves one client reading newline-delimited JSON-RPC from r and
// writing to w. A line that is not one JSON-RPC 2.0 message is answered
// with the error the specification names (-32700 parse error, -32600
// invalid request: a batch, another "jsonrpc", an id that is not a
// string or integer, …) and the server reads on: the SDK's own stdio
// transport ends the session on such a line. Only the end of r ends it:
// the requests read before it are given eofGrace to be answered (a
// client that writes its requests and closes its end at once gets its
// answers), then the session ends and calls still running are cancelled.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lockedWriter{w: w}
	// When ctx ends (SIGTERM), running calls are cancelled, their
	// commands killed: the SDK's session close waits for its calls to
	// return, and a call running `sleep 300` on this machine otherwise
	// held agent mcp up until it ended (TestMCPSignalKillsRunning).
	served := make(chan struct{})
	defer close(served)
	go func() {
		select {
		case <-ctx.Done():
			s.running.stop(stopWait)
		case <-served:
		}
	}()
	pr, pw := io.Pipe()
	go func() {
		err := filterLines(r, &tracker{w: pw, out: out}, out, maxLine(s.o.MaxArgBytes))
		out.drained(eofGrace)
		pw.CloseWithError(err)
	}()
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{out}, MaxLineLength: -1})
	pr.Close()
	return err
}

// maxLine bounds one input line: the arguments' bound and the envelope.
func maxLine(maxArgs int) int { return 2*maxArgs + httpSlack }

// eofGrace is how long requests read before the end of input have to be
// answered.
const eofGrace = 500 * time.Millisecond

// lockedWriter writes each Write whole, one at a time: the SDK's messages
// and the filter's error answers never interleave. It also sees which
// forwarded requests are answered.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending map[string]bool // ids of requests forwarded and not answered
	idle    chan struct{}   // closed when pending empties, while drained waits
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) > 0 {
		var m struct {
			ID     json.RawMessage
			Method *string
		}
		if json.Unmarshal(p, &m) == nil && m.Method == nil && m.ID != nil {
			delete(l.pending, idKey(m.ID))
			if len(l.pending) == 0 && l.idle != nil {
				close(l.idle)
				l.idle = nil
			}
		}
	}
	return l.w.Write(p)
}

// asked records a forwarded request's id.
func (l *lockedWriter) asked(id json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[string]bool{}
	}
	l.pending[idKey(id)] = true
}

// drained returns once every forwarded request is answered, or after
// grace.
func (l *lockedWriter) drained(grace time.Duration) {
	l.mu.Lock()
	if len(l.pending) == 0 {
		l.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	l.idle = idle
	l.mu.Unlock()
	select {
	case <-idle:
	case <-time.After(grace):
	}
}

// idKey is an id as a map key, the same however it was spelled.
func idKey(id json.RawMessage) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(id))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return string(id)
	}
	switch v := v.(type) {
	case string:
		return "s:" + v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return "n:" + strconv.FormatInt(i, 10)
		}
	}
	return string(id)
}

// tracker forwards lines to w and records the ids of the requests among
// them with out.
type tracker struct {
	w   io.Writer
	out *lockedWriter
}

func (t *tracker) Write(line []byte) (int, error) {
	var m struct {
		ID     json.RawMessage
		Method *string
	}
	if json.Unmarshal(line, &m) == nil && m.Method != nil && m.ID != nil {
		t.out.asked(m.ID)
	}
	return t.w.Write(line)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// filterLines copies each line of r that is one valid JSON-RPC 2.0
// message to fwd, and answers every other one on errw. It returns nil at
// the end of r, or the error that stopped it.
func filterLines(r io.Reader, fwd io.Writer, errw io.Writer, max int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, max)
		if len(line) > 0 || tooLong {
			var reply []byte
			if tooLong {
				reply = rpcError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: a message is at most %d bytes", max))
			} else if ok, rep := checkLine(line); !ok {
				reply = rep
			}
			if reply != nil {
				if _, werr := errw.Write(reply); werr != nil {
					return werr
				}
			} else if _, werr := fwd.Write(append(line, '\n')); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its end (\n or \r\n), trimmed of white
// space; one longer than max is read to its end and reported tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+2 {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSpace(buf), tooLong, err
	}
}

// checkLine decides whether line is one JSON-RPC 2.0 message the SDK can
// take; if not, reply is the error response to write.
func checkLine(line []byte) (ok bool, reply []byte) {
	if !json.Valid(line) {
		return false, rpcError(nil, jsonrpc.CodeParseError, "Parse error: the line is not valid JSON")
	}
	switch line[0] {
	case '{':
	case '[':
		return false, rpcError(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported")
	default:
		return false, rpcError(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a message is a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return false, rpcError(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
	}
	id, idOK := m["id"]
	var echo json.RawMessage
	if idOK {
		if !validID(id) {
			return false, rpcError(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: id must be a string or an integer")
		}
		echo = id
	}
	if v, ok := m["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return false, rpcError(echo, jsonrpc.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	method, isReq := m["method"]
	if isReq {
		var name string
		if json.Unmarshal(method, &name) != nil || name == "" {
			return false, rpcError(echo, jsonrpc.CodeInvalidRequest, "Invalid Request: method must be a non-empty string")
		}
		if p, ok := m["params"]; ok && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return false, rpcError(echo, jsonrpc.CodeInvalidRequest, "Invalid Request: params must be an object")
		}
	} else {
		_, res := m["result"]
		_, er := m["error"]
		if !idOK || res == er {
			return false, rpcError(echo, jsonrpc.CodeInvalidRequest, "Invalid Request: neither a request (method) nor a response (id and result or error)")
		}
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return false, rpcError(echo, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
	}
	return true, nil
}

// validID: a string, or an integer (MCP: "MUST be a string or integer";
// null is not an id).
func validID(id json.RawMessage) bool {
	var v any
	d := json.NewDecoder(bytes.NewReader(id))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return true
	case json.Number:
		_, err := v.Int64()
		return err == nil
	}
	return false
}

// rpcError is an error response line; a nil id is written as null.
func rpcError(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err != nil { // cannot happen: id is valid JSON
		panic(errors.Join(errors.New("rpcError"), err))
	}
	return append(b, '\n')
}
