package ssh

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// defaultIdentityFiles are OpenSSH's default identities, tried when the
// HostConfig names none.
var defaultIdentityFiles = []string{
	"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ecdsa_sk",
	"~/.ssh/id_ed25519", "~/.ssh/id_ed25519_sk",
}

// passphraseTries is OpenSSH's NumberOfPasswordPrompts default.
const passphraseTries = 3

// authenticator offers public keys in OpenSSH's order: ssh-agent keys first
// (with IdentitiesOnly only those matching an IdentityFile), then the
// identity files the agent did not already offer. Files are read only when
// the server gets to public-key authentication, and an encrypted key's
// passphrase is asked only when the server accepts its public key.
type authenticator struct {
	ctx  context.Context
	h    *HostConfig
	opts Options
	g    *guard

	mu      sync.Mutex
	agent   net.Conn
	offered []string // what was offered, for the failure message
	notes   []string // keys skipped, and why
	signErr error    // a key the server accepted could not sign
}

func newAuthenticator(ctx context.Context, h *HostConfig, opts Options, g *guard) *authenticator {
	return &authenticator{ctx: ctx, h: h, opts: opts, g: g}
}

func (a *authenticator) methods() []gossh.AuthMethod {
	// One publickey method: x/crypto tries each method name only once.
	return []gossh.AuthMethod{gossh.PublicKeysCallback(a.signers)}
}

func (a *authenticator) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.agent != nil {
		a.agent.Close()
		a.agent = nil
	}
}

// failure wraps the handshake's authentication error with what was tried.
func (a *authenticator) failure(err error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", describe(a.h))
	if len(a.offered) == 0 {
		b.WriteString("no key was offered")
	} else {
		b.WriteString("offered " + strings.Join(a.offered, ", "))
	}
	for _, n := range a.notes {
		b.WriteString("; " + n)
	}
	return fmt.Errorf("%w: %s: %w", ErrAuth, b.String(), err)
}

// signFailed reports whether authentication stopped because a key could
// not sign (its passphrase was not given).
func (a *authenticator) signFailed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.signErr != nil
}

func (a *authenticator) note(format string, args ...any) {
	a.notes = append(a.notes, fmt.Sprintf(format, args...))
}

// signers is the PublicKeysCallback.
func (a *authenticator) signers() ([]gossh.Signer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	files := a.h.IdentityFiles
	if len(files) == 0 {
		files = defaultIdentityFiles
	}
	ids := make([]keyFile, 0, len(files))
	for _, f := range files {
		ids = append(ids, a.load(expandLocal(f)))
	}

	var out []gossh.Signer
	seen := map[string]bool{}
	for _, s := range a.agentSigners() {
		blob := string(s.PublicKey().Marshal())
		if a.h.IdentitiesOnly && !matchesAny(blob, ids) || seen[blob] {
			continue
		}
		seen[blob] = true
		out = append(out, s)
		a.offered = append(a.offered, fmt.Sprintf("agent key %s %s", keyKind(s.PublicKey()), gossh.FingerprintSHA256(s.PublicKey())))
	}
	for _, id := range ids {
		if id.signer == nil {
			continue
		}
		blob := string(id.signer.PublicKey().Marshal())
		if seen[blob] {
			continue
		}
		seen[blob] = true
		out = append(out, id.signer)
		a.offered = append(a.offered, id.file)
	}
	return out, nil
}

// agentSigners are the keys of the configured ssh-agent, if one answers.
func (a *authenticator) agentSigners() []gossh.Signer {
	sock := a.h.IdentityAgent
	switch sock {
	case "none":
		return nil
	case "", "SSH_AUTH_SOCK":
		sock = os.Getenv("SSH_AUTH_SOCK")
	}
	if sock == "" {
		return nil
	}
	sock = expandLocal(sock)
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		a.note("ssh-agent at %s not reachable: %v", sock, err)
		return nil
	}
	a.agent = c
	signers, err := agent.NewClient(c).Signers()
	if err != nil {
		a.note("ssh-agent at %s: %v", sock, err)
		return nil
	}
	return signers
}

// keyFile is one IdentityFile: its public key (when known) and a signer
// (nil when the key cannot be used).
type keyFile struct {
	file   string
	pub    gossh.PublicKey
	signer gossh.Signer
}

func matchesAny(blob string, ids []keyFile) bool {
	for _, id := range ids {
		if id.pub != nil && string(id.pub.Marshal()) == blob {
			return true
		}
	}
	return false
}

// load reads one identity file. A missing file is skipped silently, as
// OpenSSH does; other problems are noted (and warned about).
func (a *authenticator) load(file string) keyFile {
	id := keyFile{file: file}
	data, err := os.ReadFile(file)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			a.opts.Warn(fmt.Sprintf("Warning: cannot read identity file %s: %v", file, err))
			a.note("%s unreadable: %v", file, err)
		}
		// The public key alone still selects agent keys for IdentitiesOnly.
		id.pub = readPublicKey(file + ".pub")
		return id
	}
	s, err := gossh.ParsePrivateKey(data)
	if err == nil {
		id.pub, id.signer = s.PublicKey(), s
		return id
	}
	var pm *gossh.PassphraseMissingError
	if !errors.As(err, &pm) {
		a.opts.Warn(fmt.Sprintf("Warning: cannot load identity file %s: %v", file, err))
		a.note("%s: %v", file, err)
		id.pub = readPublicKey(file + ".pub")
		return id
	}
	id.pub = pm.PublicKey
	if id.pub == nil {
		id.pub = readPublicKey(file + ".pub")
	}
	if s, err, ok := a.opts.Keys.lookup(file, data); ok {
		if err != nil {
			a.note("%v", err)
		} else {
			id.pub, id.signer = s.PublicKey(), s
		}
		return id
	}
	if a.opts.Prompter == nil {
		a.note("%s is encrypted and there is no terminal to ask for its passphrase; add it to ssh-agent", file)
		return id
	}
	load := func() (gossh.Signer, error) {
		s, err := a.decrypt(file, data)
		if err != nil {
			a.mu.Lock()
			a.signErr = err
			a.note("%v", err)
			a.mu.Unlock()
		}
		return s, err
	}
	if id.pub == nil { // unknown public key: the passphrase is needed now
		s, err := a.decrypt(file, data)
		if err != nil {
			a.note("%v", err)
			return id
		}
		id.pub, id.signer = s.PublicKey(), s
		return id
	}
	id.signer = &lazySigner{pub: id.pub, load: load}
	return id
}

// decrypt asks for the passphrase of an encrypted key (up to three times
// when it is wrong) and parses the key.
func (a *authenticator) decrypt(file string, data []byte) (gossh.Signer, error) {
	var s gossh.Signer
	var err error
	// Waiting for another connection's prompt counts as asking a person:
	// the handshake deadline is paused meanwhile.
	a.g.pause(func() {
		s, err = a.opts.Keys.decrypt(file, data, func() (gossh.Signer, error) { return a.ask(file, data) })
	})
	return s, err
}

// ask is decrypt without the cache.
func (a *authenticator) ask(file string, data []byte) (gossh.Signer, error) {
	for try := 0; try < passphraseTries; try++ {
		var pass []byte
		var err error
		a.g.pause(func() {
			pass, err = a.opts.Prompter.Passphrase(a.ctx, fmt.Sprintf("Enter passphrase for key '%s': ", file))
		})
		if err != nil {
			return nil, fmt.Errorf("passphrase for %s: %w", file, err)
		}
		if len(pass) == 0 {
			return nil, fmt.Errorf("%s: no passphrase given", file)
		}
		s, err := gossh.ParsePrivateKeyWithPassphrase(data, pass)
		clear(pass)
		if errors.Is(err, x509.IncorrectPasswordError) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s: incorrect passphrase (%d tries)", file, passphraseTries)
}

func readPublicKey(file string) gossh.PublicKey {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	k, _, _, _, err := gossh.ParseAuthorizedKey(data)
	if err != nil {
		return nil
	}
	return k
}

// lazySigner is an encrypted key whose public key is known: it asks for
// the passphrase only when the server accepted the public key and a
// signature is needed.
type lazySigner struct {
	pub  gossh.PublicKey
	load func() (gossh.Signer, error)

	once sync.Once
	s    gossh.Signer
	err  error
}

var _ gossh.AlgorithmSigner = (*lazySigner)(nil)

func (l *lazySigner) PublicKey() gossh.PublicKey { return l.pub }

func (l *lazySigner) get() (gossh.Signer, error) {
	l.once.Do(func() {
		l.s, l.err = l.load()
		if l.err == nil && !bytes.Equal(l.s.PublicKey().Marshal(), l.pub.Marshal()) {
			l.s, l.err = nil, errors.New("the private key does not match its public key")
		}
	})
	return l.s, l.err
}

func (l *lazySigner) Sign(rand io.Reader, data []byte) (*gossh.Signature, error) {
	s, err := l.get()
	if err != nil {
		return nil, err
	}
	return s.Sign(rand, data)
}

func (l *lazySigner) SignWithAlgorithm(rand io.Reader, data []byte, algorithm string) (*gossh.Signature, error) {
	s, err := l.get()
	if err != nil {
		return nil, err
	}
	if as, ok := s.(gossh.AlgorithmSigner); ok {
		return as.SignWithAlgorithm(rand, data, algorithm)
	}
	if algorithm != "" && algorithm != l.pub.Type() {
		return nil, fmt.Errorf("key %s cannot sign with %s", l.pub.Type(), algorithm)
	}
	return s.Sign(rand, data)
}
