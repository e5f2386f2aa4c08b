package ssh

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
)

// bannerConn records what the server sent before its SSH version line, so
// that a handshake that failed there can be told apart (see dropped).
type bannerConn struct {
	net.Conn
	mu      sync.Mutex
	pre     []byte // the first bytes read, up to maxPreBanner
	version bool   // an "SSH-" line was seen
}

const maxPreBanner = 256

func (c *bannerConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	if !c.version && n > 0 {
		c.pre = append(c.pre, p[:min(n, maxPreBanner-len(c.pre))]...)
		if strings.HasPrefix(string(c.pre), "SSH-") || strings.Contains(string(c.pre), "\nSSH-") || len(c.pre) >= maxPreBanner {
			c.version = true
		}
	}
	c.mu.Unlock()
	return n, err
}

// dropped reports whether err is the server closing the connection
// before it sent its version — what sshd does to a connection past
// MaxStartups (OpenSSH 8.x and later write "Exceeded MaxStartups" first)
// or, from 9.8, PerSourcePenalties ("Not allowed at this time") — and
// returns what it said, if anything.
func (c *bannerConn) dropped(err error) (said string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version || !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
		return "", false
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < ' ' || r > '~' {
			return ' '
		}
		return r
	}, string(c.pre))), true
}
