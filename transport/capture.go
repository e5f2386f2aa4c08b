package transport

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// DefaultCaptureLimit is how many bytes of a stream's head, and of its tail,
// a Capture keeps unless told otherwise.
const DefaultCaptureLimit = 32 << 10

// Capture is an io.Writer that keeps the first and the last limit bytes
// written to it and counts the rest, so that capturing a stream of any length
// costs at most 2×limit bytes of memory. It is safe for concurrent use.
type Capture struct {
	mu    sync.Mutex
	limit int
	head  []byte
	tail  []byte // ring buffer of the last limit bytes once head is full
	pos   int    // next write position in tail when len(tail) == limit
	total int64
}

// NewCapture returns a Capture keeping limit bytes of head and of tail;
// limit <= 0 means DefaultCaptureLimit.
func NewCapture(limit int) *Capture {
	if limit <= 0 {
		limit = DefaultCaptureLimit
	}
	return &Capture{limit: limit}
}

// Write records p. It never fails.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := c.limit - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= c.limit { // only the last limit bytes of p can survive
		c.tail = append(c.tail[:0], p[len(p)-c.limit:]...)
		c.pos = 0
		return n, nil
	}
	if room := c.limit - len(c.tail); room > 0 { // tail not full yet
		k := min(room, len(p))
		c.tail = append(c.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // ring: overwrite the oldest bytes
		k := copy(c.tail[c.pos:], p)
		p = p[k:]
		c.pos = (c.pos + k) % c.limit
	}
	return n, nil
}

// Total is the number of bytes written so far.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Truncated reports whether bytes were dropped from the middle.
func (c *Capture) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > int64(len(c.head)+len(c.tail))
}

// String returns the head, then, when bytes were dropped, a line
// "... [output truncated: N bytes omitted] ...", then the tail.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	b.Grow(len(c.head) + len(c.tail) + 64)
	b.Write(c.head)
	if omitted := c.total - int64(len(c.head)+len(c.tail)); omitted > 0 {
		if len(c.head) > 0 && c.head[len(c.head)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "... [output truncated: %d bytes omitted] ...\n", omitted)
	}
	b.Write(c.tail[c.pos:])
	b.Write(c.tail[:c.pos])
	return b.String()
}

// Captured returns the Result of a command whose streams stdout and stderr
// captured, with its exit code and run time.
func Captured(exitCode int, stdout, stderr *Capture, d time.Duration) Result {
	return Result{
		ExitCode:    exitCode,
		Stdout:      stdout.String(),
		Stderr:      stderr.String(),
		StdoutBytes: stdout.Total(),
		StderrBytes: stderr.Total(),
		Duration:    d,
	}
}
