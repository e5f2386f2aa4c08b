package ssh

import (
	"crypto/sha256"
	"sync"

	gossh "golang.org/x/crypto/ssh"
)

// KeyCache keeps the keys decrypted during a run, so that an encrypted
// key's passphrase is asked once for all the connections that share the
// cache (a batch's hosts), not once per host. It lives in memory for the
// run only; a failed decryption (three wrong passphrases) is remembered
// too, so the other hosts do not ask again. The zero value is not usable;
// a nil *KeyCache caches nothing.
type KeyCache struct {
	mu   sync.Mutex
	keys map[[sha256.Size]byte]*cachedKey
}

type cachedKey struct {
	mu     sync.Mutex // held while the passphrase is asked
	done   bool
	signer gossh.Signer
	err    error
}

// NewKeyCache returns an empty cache.
func NewKeyCache() *KeyCache {
	return &KeyCache{keys: map[[sha256.Size]byte]*cachedKey{}}
}

// entry returns the cache entry of the key file holding data (by content:
// the same file changed is another key).
func (c *KeyCache) entry(file string, data []byte) *cachedKey {
	sum := sha256.Sum256(append([]byte(file+"\x00"), data...))
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.keys[sum]
	if e == nil {
		e = &cachedKey{}
		c.keys[sum] = e
	}
	return e
}

// lookup returns a key already decrypted (or given up on), if any.
func (c *KeyCache) lookup(file string, data []byte) (gossh.Signer, error, bool) {
	if c == nil {
		return nil, nil, false
	}
	e := c.entry(file, data)
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.signer, e.err, e.done
}

// decrypt returns the cached key or calls ask once, whoever asks first;
// the others wait for that answer.
func (c *KeyCache) decrypt(file string, data []byte, ask func() (gossh.Signer, error)) (gossh.Signer, error) {
	if c == nil {
		return ask()
	}
	e := c.entry(file, data)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		e.signer, e.err = ask()
		e.done = true
	}
	return e.signer, e.err
}
