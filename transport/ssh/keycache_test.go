package ssh

import (
	"errors"
	"sync"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// TestKeyCacheAsksOnce: connections sharing a KeyCache (a batch's hosts,
// eight at once here) ask an encrypted key's passphrase once; three wrong
// passphrases are not asked again by the next connection either.
func TestKeyCacheAsksOnce(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	good := clientKey(t, srv.Host)
	enc := writeKey(t, t.TempDir(), "id_ed25519", good, "s3cret")
	cfg := hostConfig(srv.Host)
	cfg.IdentityFiles, cfg.IdentityAgent, cfg.IdentitiesOnly = []string{enc}, "none", true

	p := &prompter{pass: []byte("s3cret")}
	opts := Options{Prompter: p, Keys: NewKeyCache()}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- tryDial(t, cfg, opts)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, prompts := p.asked(); len(prompts) != 1 {
		t.Errorf("asked %d times for 8 connections, want once: %q", len(prompts), prompts)
	}

	wrong := &prompter{pass: []byte("wrong")}
	opts = Options{Prompter: wrong, Keys: NewKeyCache()}
	for range 2 {
		if err := tryDial(t, cfg, opts); !errors.Is(err, ErrAuth) {
			t.Errorf("wrong passphrase: %v", err)
		}
	}
	if _, prompts := wrong.asked(); len(prompts) != passphraseTries {
		t.Errorf("asked %d times over two connections, want %d (the first one's tries)", len(prompts), passphraseTries)
	}
}
