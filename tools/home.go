package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/autoshell/agent/transport"
)

// homeCache finds home directories and remembers them by host and user, so
// a file tool costs one round trip the first time only. Keys are strings,
// not transports, so closed transports are not kept alive.
type homeCache struct {
	mu sync.Mutex
	m  map[transport.HostInfo]string
}

func newHomeCache() *homeCache { return &homeCache{m: map[transport.HostInfo]string{}} }

func (h *homeCache) home(ctx context.Context, tr transport.Transport) (string, error) {
	if hd, ok := transport.As[transport.HomeDirer](tr); ok {
		return hd.HomeDir(ctx)
	}
	key := tr.Host()
	h.mu.Lock()
	home, ok := h.m[key]
	h.mu.Unlock()
	if ok {
		return home, nil
	}
	res, err := tr.Run(ctx, transport.Command{Command: `printf '%s\n' "$HOME"`})
	if err != nil {
		return "", fmt.Errorf("home directory: %w", err)
	}
	home = strings.TrimSuffix(res.Stdout, "\n")
	if res.ExitCode != 0 || !path.IsAbs(home) {
		return "", errors.New("home directory: $HOME on the target is not an absolute path")
	}
	h.mu.Lock()
	h.m[key] = home
	h.mu.Unlock()
	return home, nil
}
