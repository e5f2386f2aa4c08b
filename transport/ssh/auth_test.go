package ssh

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/autoshell/agent/testenv"
)

// startAgent serves an in-memory ssh-agent holding keys on a unix socket.
func startAgent(t *testing.T, keys ...any) string {
	t.Helper()
	ring := agent.NewKeyring()
	for _, k := range keys {
		if err := ring.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				agent.ServeAgent(ring, c)
			}()
		}
	}()
	return sock
}

// clientKey is the private key the test host accepts.
func clientKey(t *testing.T, h testenv.Host) ed25519.PrivateKey {
	t.Helper()
	k, err := gossh.ParseRawPrivateKey([]byte(fileText(t, h.IdentityFile)))
	if err != nil {
		t.Fatal(err)
	}
	return *k.(*ed25519.PrivateKey)
}

func otherKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// writeKey writes k to dir/name (encrypted when pass is set) and its
// public key to dir/name.pub; it returns the private key's path. Keys are
// encrypted by ssh-keygen with one KDF round: x/crypto's fixed 16 rounds of
// bcrypt take seconds under the race detector.
func writeKey(t *testing.T, dir, name string, k ed25519.PrivateKey, pass string) string {
	t.Helper()
	block, err := gossh.MarshalPrivateKey(k, "test")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if pass != "" {
		if out, err := exec.Command("ssh-keygen", "-q", "-p", "-a", "1", "-N", pass, "-f", p).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen -p: %v: %s", err, out)
		}
	}
	writePub(t, p+".pub", k)
	return p
}

func writePub(t *testing.T, p string, k ed25519.PrivateKey) {
	t.Helper()
	pub, err := gossh.NewPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, gossh.MarshalAuthorizedKey(pub), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAuth(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	good, bad := clientKey(t, srv.Host), otherKey(t)
	cfgWith := func(files []string, sock string, only bool) *HostConfig {
		cfg := hostConfig(srv.Host)
		cfg.IdentityFiles, cfg.IdentityAgent, cfg.IdentitiesOnly = files, sock, only
		return cfg
	}

	t.Run("agent", func(t *testing.T) {
		sock := startAgent(t, bad, good)
		if err := tryDial(t, cfgWith([]string{"/nonexistent/id"}, sock, false), Options{}); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SSH_AUTH_SOCK", sock)
		if err := tryDial(t, cfgWith(nil, "", false), Options{}); err != nil {
			t.Errorf("agent from SSH_AUTH_SOCK: %v", err)
		}
		if err := tryDial(t, cfgWith([]string{"/nonexistent/id"}, "none", false), Options{}); !errors.Is(err, ErrAuth) {
			t.Errorf("IdentityAgent none: %v", err)
		}
	})

	t.Run("IdentitiesOnly", func(t *testing.T) {
		sock := startAgent(t, bad, good)
		dir := t.TempDir()
		id := filepath.Join(dir, "id") // only id.pub exists: the key is in the agent
		writePub(t, id+".pub", bad)
		err := tryDial(t, cfgWith([]string{id}, sock, true), Options{})
		if !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), gossh.FingerprintSHA256(mustPub(t, good))) {
			t.Errorf("agent key not matching an IdentityFile was offered: %v", err)
		}
		writePub(t, id+".pub", good)
		if err := tryDial(t, cfgWith([]string{id}, sock, true), Options{}); err != nil {
			t.Errorf("agent key matching the IdentityFile: %v", err)
		}
	})

	t.Run("encrypted key without terminal", func(t *testing.T) {
		enc := writeKey(t, t.TempDir(), "id_ed25519", good, "s3cret")
		err := tryDial(t, cfgWith([]string{enc}, "none", true), Options{})
		want := enc + " is encrypted and there is no terminal to ask for its passphrase; add it to ssh-agent"
		if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to say %q", err, want)
		}
	})

	t.Run("encrypted key with terminal", func(t *testing.T) {
		enc := writeKey(t, t.TempDir(), "id_ed25519", good, "s3cret")
		p := &prompter{pass: []byte("s3cret")}
		if err := tryDial(t, cfgWith([]string{enc}, "none", true), Options{Prompter: p}); err != nil {
			t.Fatal(err)
		}
		if _, prompts := p.asked(); len(prompts) != 1 || prompts[0] != "Enter passphrase for key '"+enc+"': " {
			t.Errorf("prompts %q", prompts)
		}
		p = &prompter{pass: []byte("wrong")}
		if err := tryDial(t, cfgWith([]string{enc}, "none", true), Options{Prompter: p}); !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "incorrect passphrase") {
			t.Errorf("wrong passphrase: %v", err)
		}
		if _, prompts := p.asked(); len(prompts) != passphraseTries {
			t.Errorf("asked %d times for a wrong passphrase, want %d", len(prompts), passphraseTries)
		}
	})

	t.Run("passphrase asked only for a key the server accepts", func(t *testing.T) {
		dir := t.TempDir()
		encBad := writeKey(t, dir, "id_bad", bad, "s3cret")
		plainGood := writeKey(t, dir, "id_good", good, "")
		p := &prompter{pass: []byte("s3cret")}
		if err := tryDial(t, cfgWith([]string{encBad, plainGood}, "none", true), Options{Prompter: p}); err != nil {
			t.Fatal(err)
		}
		if _, prompts := p.asked(); len(prompts) != 0 {
			t.Errorf("asked %q for a key the server does not accept", prompts)
		}
	})

	t.Run("failure lists what was tried", func(t *testing.T) {
		dir := t.TempDir()
		wrong := writeKey(t, dir, "id_wrong", bad, "")
		var w warnings
		err := tryDial(t, cfgWith([]string{dir, wrong, "/nonexistent/id"}, "none", true), Options{Warn: w.warn})
		if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "offered "+wrong) || !strings.Contains(err.Error(), "publickey") {
			t.Errorf("err = %v", err)
		}
		if !strings.Contains(w.String(), "cannot read identity file "+dir) || strings.Contains(w.String(), "nonexistent") {
			t.Errorf("warnings %q: want one for the unreadable file only", w.String())
		}
	})
}

func mustPub(t *testing.T, k ed25519.PrivateKey) gossh.PublicKey {
	t.Helper()
	pub, err := gossh.NewPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pub
}
