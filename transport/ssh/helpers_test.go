package ssh

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/autoshell/agent/testenv"
)

// hostConfig reaches h the way its ssh_config does, without parsing it.
func hostConfig(h testenv.Host) *HostConfig {
	return &HostConfig{
		Alias:                 h.Alias,
		HostName:              "127.0.0.1",
		Port:                  h.Port,
		User:                  h.User,
		IdentityFiles:         []string{h.IdentityFile},
		IdentitiesOnly:        true,
		IdentityAgent:         "none",
		ConnectTimeout:        10 * time.Second,
		StrictHostKeyChecking: "yes",
		UserKnownHostsFiles:   []string{h.KnownHosts},
	}
}

// warnings collects Options.Warn messages.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) warn(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.msgs, "\n")
}

// dial dials cfg and closes the transport when t ends.
func dial(t *testing.T, cfg *HostConfig, opts Options) *Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := Dial(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("Dial %s: %v", cfg.Alias, err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// scratchDir makes a fresh directory under h.Home (the real home for sshd)
// and removes it when t ends.
func scratchDir(t *testing.T, h testenv.Host) string {
	t.Helper()
	dir, err := os.MkdirTemp(h.Home, ".agent-ssh-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// viaProxy returns a HostConfig reaching h through a new fault proxy, with
// a known_hosts file that knows h's key under the proxy's address.
func viaProxy(t *testing.T, h testenv.Host) (*HostConfig, *testenv.Proxy) {
	t.Helper()
	proxy := testenv.StartProxy(t, h.Addr)
	cfg := hostConfig(h)
	cfg.Port = proxy.Port
	cfg.UserKnownHostsFiles = []string{knownHostsFile(t, proxy.Addr, h.HostKey)}
	return cfg, proxy
}

// knownHostsFile writes a known_hosts file holding key for addr.
func knownHostsFile(t *testing.T, addr string, keys ...gossh.PublicKey) string {
	t.Helper()
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(knownhosts.Line([]string{knownhosts.Normalize(addr)}, k) + "\n")
	}
	f := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// prompter is a Prompter with canned answers that records what it was asked.
type prompter struct {
	confirm bool
	pass    []byte

	mu        sync.Mutex
	questions []string
	prompts   []string
}

func (p *prompter) Confirm(_ context.Context, q string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.questions = append(p.questions, q)
	return p.confirm, nil
}

func (p *prompter) Passphrase(_ context.Context, prompt string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prompts = append(p.prompts, prompt)
	return append([]byte(nil), p.pass...), nil
}

func (p *prompter) asked() (questions, prompts []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.questions...), append([]string(nil), p.prompts...)
}

// tryDial dials cfg with a short deadline and closes any transport.
func tryDial(t *testing.T, cfg *HostConfig, opts Options) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := Dial(ctx, cfg, opts)
	if err == nil {
		tr.Close()
	}
	return err
}
