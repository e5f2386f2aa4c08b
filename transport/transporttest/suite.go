// Package transporttest is the one conformance suite every transport.Transport
// passes: local, the in-process SSH server and real OpenSSH sshd.
package transporttest

import (
	"testing"

	"github.com/autoshell/agent/transport"
)

// Fixture is one host reached through the transport under test.
type Fixture struct {
	// Transport is the transport under test, already connected.
	Transport transport.Transport
	// Dir is an existing, empty, writable directory on the host (absolute
	// path as the host sees it), removed by the fixture's own cleanup.
	Dir string
	// Home is what "~" means on the host.
	Home string
	// CutAfter, when set, returns a second transport to the same host whose
	// connection is cut once n more bytes have been sent to the host. The
	// suite closes it. Nil for transports without a connection (local).
	CutAfter func(t *testing.T, n int64) transport.Transport
	// Root reports whether commands on the host run as root (permission
	// tests are skipped then: root may read anything).
	Root bool
}

// Run runs the whole suite; newFixture is called once per subtest.
func Run(t *testing.T, newFixture func(t *testing.T) Fixture) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newFixture(t))
		})
	}
}

var cases []struct {
	name string
	fn   func(t *testing.T, f Fixture)
}

func add(name string, fn func(t *testing.T, f Fixture)) {
	cases = append(cases, struct {
		name string
		fn   func(t *testing.T, f Fixture)
	}{name, fn})
}
