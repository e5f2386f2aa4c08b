package scenarios

import (
	"context"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/autoshell/agent/transport"
)

// timedTransport adds up the time spent inside the transport: the work
// on the host (commands, file reads and writes), which the agent's own
// overhead is told apart from.
type timedTransport struct {
	next transport.Transport
	mu   sync.Mutex
	d    time.Duration
	// first is the first command's time: stepgen.Run's environment probe.
	first time.Duration
	runs  int
}

func (t *timedTransport) add(start time.Time) {
	d := time.Since(start)
	t.mu.Lock()
	t.d += d
	t.mu.Unlock()
}

// spent returns the time inside the transport, and of it the first
// command's.
func (t *timedTransport) spent() (all, first time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.d, t.first
}

func (t *timedTransport) Run(ctx context.Context, cmd transport.Command) (transport.Result, error) {
	start := time.Now()
	res, err := t.next.Run(ctx, cmd)
	d := time.Since(start)
	t.mu.Lock()
	t.d += d
	if t.runs == 0 {
		t.first = d
	}
	t.runs++
	t.mu.Unlock()
	return res, err
}

func (t *timedTransport) ReadFile(ctx context.Context, path string, w io.Writer) (int64, error) {
	defer t.add(time.Now())
	return t.next.ReadFile(ctx, path, w)
}

func (t *timedTransport) WriteFile(ctx context.Context, path string, r io.Reader, perm fs.FileMode) (int64, error) {
	defer t.add(time.Now())
	return t.next.WriteFile(ctx, path, r, perm)
}

func (t *timedTransport) Stat(ctx context.Context, path string) (fs.FileInfo, error) {
	defer t.add(time.Now())
	return t.next.Stat(ctx, path)
}

func (t *timedTransport) Host() transport.HostInfo { return t.next.Host() }

func (t *timedTransport) Close() error { return t.next.Close() }

// timedHomeTransport is a timedTransport whose transport knows its home
// directory (transport.HomeDirer, as the SSH transport does).
type timedHomeTransport struct {
	*timedTransport
	hd transport.HomeDirer
}

func (t timedHomeTransport) HomeDir(ctx context.Context) (string, error) {
	defer t.add(time.Now())
	return t.hd.HomeDir(ctx)
}

// timedPathTransport is a timedTransport whose transport resolves paths
// itself, as the planner's safety check asks it to (transport/ssh).
type timedPathTransport struct {
	*timedTransport
	rp transport.RealPather
}

func (t timedPathTransport) RealPath(ctx context.Context, p string) (string, error) {
	defer t.add(time.Now())
	return t.rp.RealPath(ctx, p)
}

// timedFullTransport has both capabilities (transport/local).
type timedFullTransport struct {
	timedHomeTransport
	rp transport.RealPather
}

func (t timedFullTransport) RealPath(ctx context.Context, p string) (string, error) {
	defer t.add(time.Now())
	return t.rp.RealPath(ctx, p)
}

// timeTransport wraps tr, keeping its optional capabilities.
func timeTransport(tr transport.Transport) (transport.Transport, *timedTransport) {
	t := &timedTransport{next: tr}
	hd, isHD := tr.(transport.HomeDirer)
	rp, isRP := tr.(transport.RealPather)
	switch {
	case isHD && isRP:
		return timedFullTransport{timedHomeTransport{t, hd}, rp}, t
	case isHD:
		return timedHomeTransport{t, hd}, t
	case isRP:
		return timedPathTransport{t, rp}, t
	}
	return t, t
}
