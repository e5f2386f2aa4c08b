package ssh

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/autoshell/agent/testenv"
)

func TestKnownHostsAddr(t *testing.T) {
	for _, tc := range []struct {
		host string
		port int
		want string
	}{
		{"example.com", 22, "example.com"},
		{"Example.COM", 0, "example.com"},
		{"10.0.0.1", 2222, "[10.0.0.1]:2222"},
		{"::1", 22, "::1"},
		{"::1", 2200, "[::1]:2200"},
	} {
		if got := knownHostsAddr(&HostConfig{HostName: tc.host, Port: tc.port}); got != tc.want {
			t.Errorf("%s port %d: %q, want %q", tc.host, tc.port, got, tc.want)
		}
	}
}

func TestHostKeyAlgorithms(t *testing.T) {
	ed := newKey(t)
	rsaKey := rsaPublic(t, newRSAKey(t))
	for _, tc := range []struct {
		name  string
		known []gossh.PublicKey
		ca    bool
		want  []string
	}{
		{"ed25519 only", []gossh.PublicKey{ed}, false, []string{gossh.KeyAlgoED25519}},
		{"rsa only", []gossh.PublicKey{rsaKey}, false, []string{gossh.KeyAlgoRSASHA512, gossh.KeyAlgoRSASHA256}},
		{"both, OpenSSH order", []gossh.PublicKey{rsaKey, ed}, false, []string{gossh.KeyAlgoED25519, gossh.KeyAlgoRSASHA512, gossh.KeyAlgoRSASHA256}},
		{"unknown host", nil, false, hostKeyOrder},
		{"unknown host with a CA", nil, true, nil},
	} {
		if got := hostKeyAlgorithms(tc.known, tc.ca); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAppendKnownHost(t *testing.T) {
	file := filepath.Join(t.TempDir(), "new", ".ssh", "known_hosts")
	k1, k2 := newKey(t), newKey(t)
	if added, err := appendKnownHost(file, "[127.0.0.1]:2222", k1, false); err != nil || !added {
		t.Fatal(added, err)
	}
	os.WriteFile(file, []byte(strings.TrimSuffix(fileText(t, file), "\n")), 0o600) // lost its newline
	if added, err := appendKnownHost(file, "host.example", k2, false); err != nil || !added {
		t.Fatal(added, err)
	}
	// Already there (written since the connection read the file): nothing
	// is added.
	for addr, k := range map[string]gossh.PublicKey{"[127.0.0.1]:2222": k1, "host.example": k2} {
		if added, err := appendKnownHost(file, addr, k, false); err != nil || added {
			t.Errorf("%s again: added %v, %v", addr, added, err)
		}
	}
	lines := strings.Split(strings.TrimSpace(fileText(t, file)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "[127.0.0.1]:2222 ssh-ed25519 ") || !strings.HasPrefix(lines[1], "host.example ssh-ed25519 ") {
		t.Errorf("known_hosts = %q", lines)
	}
	for p, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

// TestAppendKnownHostHashed: a hashed entry (HashKnownHosts yes) for the
// same host and key counts as present; another key for it does not.
func TestAppendKnownHostHashed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "known_hosts")
	k := newKey(t)
	os.WriteFile(file, []byte(knownhosts.Line([]string{knownhosts.HashHostname("[10.0.0.1]:2200")}, k)+"\n"), 0o600)
	if added, err := appendKnownHost(file, "[10.0.0.1]:2200", k, false); err != nil || added {
		t.Errorf("hashed entry present: added %v, %v", added, err)
	}
	if added, err := appendKnownHost(file, "[10.0.0.1]:2201", k, false); err != nil || !added {
		t.Errorf("other port: added %v, %v", added, err)
	}
	if added, err := appendKnownHost(file, "[10.0.0.1]:2200", newKey(t), false); err != nil || !added {
		t.Errorf("other key: added %v, %v", added, err)
	}
	if n := strings.Count(fileText(t, file), "\n"); n != 3 {
		t.Errorf("%d lines:\n%s", n, fileText(t, file))
	}
}

// TestAcceptNewConcurrentDials: many connections of one process to the same
// new host:port at once (a batch with --forks) under StrictHostKeyChecking
// accept-new write its key once, and say "Permanently added" once.
func TestAcceptNewConcurrentDials(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	file := filepath.Join(t.TempDir(), "ssh", "known_hosts")
	const n = 16
	var w warnings
	errs := make(chan error, n)
	for range n {
		go func() {
			cfg := hostConfig(srv.Host)
			cfg.StrictHostKeyChecking = "accept-new"
			cfg.UserKnownHostsFiles = []string{file}
			errs <- tryDial(t, cfg, Options{Warn: w.warn})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	want := knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, srv.HostKey) + "\n"
	if got := fileText(t, file); got != want {
		t.Errorf("known_hosts after %d concurrent dials:\n%s\nwant one line:\n%s", n, got, want)
	}
	if c := strings.Count(w.String(), "Permanently added"); c != 1 {
		t.Errorf("%d 'Permanently added' warnings, want 1: %s", c, w.String())
	}
}

// TestUnknownHost covers StrictHostKeyChecking against real sshd.
func TestUnknownHost(t *testing.T) {
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	fp := gossh.FingerprintSHA256(d.HostKey)
	addr := fmt.Sprintf("[127.0.0.1]:%d", d.Port)
	setup := func(t *testing.T, strict string) (*HostConfig, string) {
		cfg := hostConfig(d.Host)
		cfg.StrictHostKeyChecking = strict
		file := filepath.Join(t.TempDir(), "ssh", "known_hosts")
		cfg.UserKnownHostsFiles = []string{file}
		return cfg, file
	}

	t.Run("ask, answered yes", func(t *testing.T) {
		cfg, file := setup(t, "ask")
		p := &prompter{confirm: true}
		var w warnings
		if err := tryDial(t, cfg, Options{Prompter: p, Warn: w.warn}); err != nil {
			t.Fatal(err)
		}
		q, _ := p.asked()
		want := fmt.Sprintf("The authenticity of host '%s (%s)' can't be established.\nED25519 key fingerprint is %s.\n", addr, addr, fp)
		if len(q) != 1 || !strings.HasPrefix(q[0], want) || !strings.HasSuffix(q[0], "Are you sure you want to continue connecting (yes/no)?") {
			t.Errorf("asked %q", q)
		}
		if !strings.Contains(w.String(), "Permanently added '"+addr+"' (ED25519) to the list of known hosts") {
			t.Errorf("warnings: %q", w.String())
		}
		if got := fileText(t, file); got != knownhosts.Line([]string{addr}, d.HostKey)+"\n" {
			t.Errorf("known_hosts = %q", got)
		}
		cfg.StrictHostKeyChecking = "yes" // now known
		if err := tryDial(t, cfg, Options{}); err != nil {
			t.Errorf("second dial: %v", err)
		}
	})

	t.Run("ask, answered no", func(t *testing.T) {
		cfg, file := setup(t, "ask")
		err := tryDial(t, cfg, Options{Prompter: &prompter{confirm: false}})
		if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), "not accepted") {
			t.Errorf("err = %v", err)
		}
		if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("known_hosts written after a no: %v", err)
		}
	})

	t.Run("ask, no terminal", func(t *testing.T) {
		cfg, _ := setup(t, "")
		err := tryDial(t, cfg, Options{})
		if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), "no terminal") || !strings.Contains(err.Error(), fp) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("yes refuses", func(t *testing.T) {
		cfg, _ := setup(t, "yes")
		p := &prompter{confirm: true}
		err := tryDial(t, cfg, Options{Prompter: p})
		if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), fp) || !strings.Contains(err.Error(), fmt.Sprintf("ssh-keyscan -p %d 127.0.0.1", d.Port)) {
			t.Errorf("err = %v", err)
		}
		if q, _ := p.asked(); len(q) != 0 {
			t.Errorf("asked %q under StrictHostKeyChecking yes", q)
		}
	})

	t.Run("accept-new with HashKnownHosts", func(t *testing.T) {
		cfg, file := setup(t, "accept-new")
		cfg.HashKnownHosts = true
		if err := tryDial(t, cfg, Options{}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(file)
		if err != nil || !strings.HasPrefix(string(data), "|1|") || strings.Contains(string(data), "127.0.0.1") {
			t.Fatalf("known_hosts %q, %v: want one hashed entry", data, err)
		}
		cfg.StrictHostKeyChecking = "yes"
		if err := tryDial(t, cfg, Options{}); err != nil {
			t.Errorf("dial with the hashed key: %v", err)
		}
		// OpenSSH finds the hashed entry (ssh-keygen -F) and connects with it.
		if out, err := exec.Command("ssh-keygen", "-F", fmt.Sprintf("[127.0.0.1]:%d", d.Port), "-f", file).CombinedOutput(); err != nil || !strings.Contains(string(out), "found") {
			t.Errorf("ssh-keygen -F: %v: %s", err, out)
		}
		out, err := exec.Command("ssh", "-F", "none", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
			"-o", "UserKnownHostsFile="+file, "-o", "GlobalKnownHostsFile=/dev/null", "-i", d.IdentityFile,
			"-p", fmt.Sprint(d.Port), d.User+"@127.0.0.1", "echo ok").CombinedOutput()
		if err != nil || !strings.HasSuffix(string(out), "ok\n") {
			t.Errorf("ssh with our hashed known_hosts: %v: %s", err, out)
		}
		if after, _ := os.ReadFile(file); string(after) != string(data) {
			t.Errorf("known_hosts changed on the second connection:\n%s", after)
		}
	})

	t.Run("accept-new", func(t *testing.T) {
		cfg, file := setup(t, "accept-new")
		var w warnings
		if err := tryDial(t, cfg, Options{Warn: w.warn}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(w.String(), "Permanently added") {
			t.Errorf("warnings: %q", w.String())
		}
		for p, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %v, want mode %v", p, err, want)
			}
		}
		cfg.StrictHostKeyChecking = "yes"
		if err := tryDial(t, cfg, Options{}); err != nil {
			t.Errorf("dial with the added key: %v", err)
		}
		// OpenSSH reads the line we wrote.
		out, err := exec.Command("ssh", "-F", "none", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
			"-o", "UserKnownHostsFile="+file, "-o", "GlobalKnownHostsFile=/dev/null", "-i", d.IdentityFile,
			"-p", fmt.Sprint(d.Port), d.User+"@127.0.0.1", "echo ok").CombinedOutput()
		if err != nil || !strings.HasSuffix(string(out), "ok\n") {
			t.Errorf("ssh with our known_hosts: %v: %s", err, out)
		}
	})

	t.Run("changed key is always refused", func(t *testing.T) {
		for _, strict := range []string{"yes", "ask", "accept-new", "no"} {
			cfg, file := setup(t, strict)
			os.MkdirAll(filepath.Dir(file), 0o700)
			os.WriteFile(file, []byte("# comment\n"+knownhosts.Line([]string{addr}, newKey(t))+"\n"), 0o600)
			p := &prompter{confirm: true}
			err := tryDial(t, cfg, Options{Prompter: p})
			if !errors.Is(err, ErrHostKey) {
				t.Fatalf("%s: err = %v", strict, err)
			}
			for _, want := range []string{
				"@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @",
				"The fingerprint for the ED25519 key sent by the remote host is\n" + fp + ".",
				"Offending ED25519 key in " + file + ":2",
				"Host key verification failed.",
			} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: warning lacks %q:\n%v", strict, want, err)
				}
			}
			// One line for tables: the reason, where the old key is.
			var he *HostKeyError
			wantShort := fmt.Sprintf("host key for %s changed (%s:2)", addr, filepath.Base(file))
			if !errors.As(err, &he) || he.Short() != wantShort {
				t.Errorf("%s: short form: %v, want %q", strict, err, wantShort)
			}
			if first, _, _ := strings.Cut(err.Error(), "\n"); !strings.HasSuffix(first, wantShort) || strings.Contains(first, "@") {
				t.Errorf("%s: first line %q", strict, first)
			}
			if q, _ := p.asked(); len(q) != 0 {
				t.Errorf("%s: asked %q", strict, q)
			}
		}
	})
}

// TestHostKeyAlgorithmsFromKnownHosts: sshd has an RSA and an ED25519 host
// key and known_hosts holds only one of them (golang/go#29286).
func TestHostKeyAlgorithmsFromKnownHosts(t *testing.T) {
	rsaKey := newRSAKey(t)
	keyFile := filepath.Join(t.TempDir(), "ssh_host_rsa_key")
	block, err := gossh.MarshalPrivateKey(rsaKey, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartSSHD(t, testenv.SSHDOptions{ExtraConfig: "HostKey " + keyFile})
	for name, key := range map[string]gossh.PublicKey{"ed25519": d.HostKey, "rsa": rsaPublic(t, rsaKey)} {
		cfg := hostConfig(d.Host)
		cfg.UserKnownHostsFiles = []string{knownHostsFile(t, d.Addr, key)}
		if err := tryDial(t, cfg, Options{}); err != nil {
			t.Errorf("known_hosts with only the %s key: %v", name, err)
		}
	}

	// Without HostKeyAlgorithms, x/crypto prefers RSA and sees a mismatch.
	cb, err := knownhosts.New(knownHostsFile(t, d.Addr, d.HostKey))
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Host.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	c.HostKeyCallback = cb
	client, err := gossh.Dial("tcp", d.Addr, c)
	if err == nil {
		client.Close()
		t.Log("x/crypto negotiated the known ED25519 key by itself")
	} else if !strings.Contains(err.Error(), "key mismatch") {
		t.Errorf("plain x/crypto: %v", err)
	}
}

func newKey(t *testing.T) gossh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newRSAKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func rsaPublic(t *testing.T, k *rsa.PrivateKey) gossh.PublicKey {
	t.Helper()
	pub, err := gossh.NewPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func fileText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBadKnownHostsLines: lines x/crypto cannot parse are skipped with a
// warning; the good ones still work, with the real file and line reported.
func TestBadKnownHostsLines(t *testing.T) {
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	addr := knownhosts.Normalize(srv.Addr)
	bad := []string{
		"garbage",
		addr + " ssh-future AAAAC3NzaC1lZDI1NTE5AAAAI",
		"@unknown " + addr + " " + strings.TrimSpace(string(gossh.MarshalAuthorizedKey(newKey(t)))),
		"[broken " + strings.TrimSpace(string(gossh.MarshalAuthorizedKey(newKey(t)))),
		"|1|bad|hash " + strings.TrimSpace(string(gossh.MarshalAuthorizedKey(newKey(t)))),
	}
	for _, tc := range []struct {
		name    string
		key     gossh.PublicKey
		changed bool
	}{{"matching key", srv.HostKey, false}, {"changed key", newKey(t), true}} {
		file := filepath.Join(t.TempDir(), "known_hosts")
		content := strings.Join(bad, "\n") + "\n" + knownhosts.Line([]string{addr}, tc.key) + "\n"
		os.WriteFile(file, []byte(content), 0o600)
		cfg := hostConfig(srv.Host)
		cfg.UserKnownHostsFiles = []string{file}
		var w warnings
		err := tryDial(t, cfg, Options{Warn: w.warn})
		if got := strings.Count(w.String(), "ignoring a line"); got != len(bad) {
			t.Errorf("%s: %d warnings, want %d: %s", tc.name, got, len(bad), w.String())
		}
		if !tc.changed && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.changed && (!errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), fmt.Sprintf("in %s:%d", file, len(bad)+1))) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// Port 22 is where nearly every production host listens: known_hosts names
// it without a port, and the check must still find it (a bare "host" given
// to knownhosts' callback fails).
func TestHostKeyPort22(t *testing.T) {
	good, other := newKey(t), newKey(t)
	for _, port := range []int{0, 22} {
		kh := knownHostsFile(t, "web.example.com:22", good)
		if b, _ := os.ReadFile(kh); !strings.HasPrefix(string(b), "web.example.com ssh-ed25519 ") {
			t.Fatalf("known_hosts line %q", b)
		}
		cfg := &HostConfig{HostName: "Web.Example.com", Port: port, StrictHostKeyChecking: "yes", UserKnownHostsFiles: []string{kh}, GlobalKnownHostsFiles: []string{}}
		hk, err := newHostKeyChecker(t.Context(), cfg, Options{Warn: func(string) {}}, &guard{})
		if err != nil {
			t.Fatal(err)
		}
		if got := hk.algorithms(); !slices.Equal(got, []string{gossh.KeyAlgoED25519}) {
			t.Errorf("port %d: host key algorithms %v, want only ed25519 from known_hosts", port, got)
		}
		addr := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 22}
		if err := hk.check("web.example.com:22", addr, good); err != nil {
			t.Errorf("port %d: the known key refused: %v", port, err)
		}
		if err := hk.check("web.example.com:22", addr, other); !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), "REMOTE HOST IDENTIFICATION HAS CHANGED") {
			t.Errorf("port %d: a changed key: %v", port, err)
		}
	}
}

// UserKnownHostsFile none with accept-new: the key is accepted for the
// connection and written nowhere (never to a literal "~" directory).
func TestAcceptNewWithoutKnownHostsFile(t *testing.T) {
	t.Chdir(t.TempDir())
	var warns warnings
	cfg := &HostConfig{HostName: "h.example", Port: 2222, StrictHostKeyChecking: "accept-new", UserKnownHostsFiles: []string{"none"}, GlobalKnownHostsFiles: []string{}}
	hk, err := newHostKeyChecker(t.Context(), cfg, Options{Warn: warns.warn}, &guard{})
	if err != nil {
		t.Fatal(err)
	}
	if err := hk.check("h.example:2222", nil, newKey(t)); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("files written in the working directory: %v", entries)
	}
	if !strings.Contains(warns.String(), "for this connection only") {
		t.Errorf("warnings %q", warns.String())
	}
}
