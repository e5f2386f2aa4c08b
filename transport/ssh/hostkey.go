package ssh

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError is a refused host key whose explanation takes several lines
// (OpenSSH's changed-key warning, the advice for an unknown key). Its
// Error is "host key verification failed: " + the one-line reason, then
// the explanation; Short is the reason alone, for one-line displays (a
// batch's summary table). errors.Is(err, ErrHostKey) holds.
type HostKeyError struct {
	short  string // e.g. "host key for [web]:2222 changed (known_hosts:5)"
	detail string // the full explanation, several lines
}

func (e *HostKeyError) Error() string {
	return ErrHostKey.Error() + ": " + e.short + "\n" + e.detail
}

// Short is the one-line reason, without the explanation.
func (e *HostKeyError) Short() string { return e.short }

// Unwrap makes errors.Is(err, ErrHostKey) true.
func (e *HostKeyError) Unwrap() error { return ErrHostKey }

// hostKeyChecker verifies one hop's host key against its known_hosts files
// and applies StrictHostKeyChecking to unknown keys.
type hostKeyChecker struct {
	ctx   context.Context
	h     *HostConfig
	opts  Options
	g     *guard
	addr  string   // the known_hosts name: "host" or "[host]:port", for messages and new lines
	query string   // "host:port" always: what knownhosts' callback takes
	files []string // readable known_hosts files, user files first
	known []gossh.PublicKey
	ca    bool // some file has a @cert-authority line
	cb    gossh.HostKeyCallback

	mu  sync.Mutex
	err error // the refusal reported to the user, when there was one
}

func newHostKeyChecker(ctx context.Context, h *HostConfig, opts Options, g *guard) (*hostKeyChecker, error) {
	hk := &hostKeyChecker{ctx: ctx, h: h, opts: opts, g: g, addr: knownHostsAddr(h), query: queryAddr(h)}
	var contents [][]byte
	global := h.GlobalKnownHostsFiles
	if global == nil {
		global = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"} // OpenSSH's defaults
	}
	for _, f := range append(userKnownHostsFiles(h), global...) {
		f = expandLocal(f)
		data, err := os.ReadFile(f)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || f == "none" {
				continue
			}
			opts.Warn(fmt.Sprintf("Warning: cannot read known hosts file %s: %v", f, err))
			continue
		}
		hk.files = append(hk.files, f)
		contents = append(contents, data)
		hk.ca = hk.ca || bytes.Contains(data, []byte("@cert-authority"))
	}
	cb, err := loadKnownHosts(hk.files, contents, opts.Warn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHostKey, err)
	}
	hk.cb = cb
	// Ask the database with a key it cannot hold: the KeyError lists every
	// key known for the host (golang/go#29286).
	var ke *knownhosts.KeyError
	if err := cb(hk.query, dummyAddr, probeKey()); errors.As(err, &ke) {
		for _, k := range ke.Want {
			hk.known = append(hk.known, k.Key)
		}
	}
	return hk, nil
}

// hostKeyOrder is OpenSSH's preference among the plain host key algorithms
// x/crypto supports.
var hostKeyOrder = []string{
	gossh.KeyAlgoED25519,
	gossh.KeyAlgoECDSA256, gossh.KeyAlgoECDSA384, gossh.KeyAlgoECDSA521,
	gossh.KeyAlgoSKED25519, gossh.KeyAlgoSKECDSA256,
	gossh.KeyAlgoRSASHA512, gossh.KeyAlgoRSASHA256,
}

// algorithms is ClientConfig.HostKeyAlgorithms: only the algorithms of the
// keys known_hosts holds for the host, so that a server offering several
// keys shows the one we can check (otherwise x/crypto may negotiate RSA
// while known_hosts holds ED25519 and report a mismatch, golang/go#29286).
// Unknown hosts get OpenSSH's order, or x/crypto's defaults (which accept
// host certificates) when a @cert-authority line exists.
func (hk *hostKeyChecker) algorithms() []string {
	return hostKeyAlgorithms(hk.known, hk.ca)
}

func hostKeyAlgorithms(known []gossh.PublicKey, ca bool) []string {
	if len(known) == 0 {
		if ca {
			return nil
		}
		return slices.Clone(hostKeyOrder)
	}
	types := map[string]bool{}
	for _, k := range known {
		types[k.Type()] = true
	}
	var algos []string
	for _, a := range hostKeyOrder {
		t := a
		if a == gossh.KeyAlgoRSASHA512 || a == gossh.KeyAlgoRSASHA256 {
			t = gossh.KeyAlgoRSA
		}
		if types[t] {
			algos = append(algos, a)
		}
	}
	if len(algos) == 0 || ca {
		return nil // nothing we support is known: let the server pick, and fail the check clearly
	}
	return algos
}

// check is the HostKeyCallback.
func (hk *hostKeyChecker) check(_ string, remote net.Addr, key gossh.PublicKey) error {
	err := hk.verify(remote, key)
	if err != nil {
		hk.mu.Lock()
		hk.err = err
		hk.mu.Unlock()
	}
	return err
}

func (hk *hostKeyChecker) refusal() error {
	hk.mu.Lock()
	defer hk.mu.Unlock()
	return hk.err
}

func (hk *hostKeyChecker) verify(remote net.Addr, key gossh.PublicKey) error {
	if _, ok := remote.(*net.TCPAddr); !ok {
		remote = dummyAddr // no address (a ProxyCommand's socket pair): names only
	}
	err := hk.cb(hk.query, remote, key)
	if err == nil {
		return nil
	}
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("%w: the %s host key of %s is marked as revoked in %s:%d",
			ErrHostKey, keyKind(key), hk.addr, re.Revoked.Filename, re.Revoked.Line)
	case errors.As(err, &ke) && len(ke.Want) > 0:
		return &HostKeyError{
			short:  fmt.Sprintf("host key for %s changed (%s:%d)", hk.addr, filepath.Base(ke.Want[0].Filename), ke.Want[0].Line),
			detail: changedWarning(hk.addr, key, ke.Want),
		}
	case errors.As(err, &ke):
		return hk.unknown(key, remoteName(remote, hk.addr))
	}
	return fmt.Errorf("%w: %s: %w", ErrHostKey, hk.addr, err)
}

// unknown applies StrictHostKeyChecking to a host known_hosts does not list.
func (hk *hostKeyChecker) unknown(key gossh.PublicKey, ip string) error {
	fp := gossh.FingerprintSHA256(key)
	kind := keyKind(key)
	switch strings.ToLower(hk.h.StrictHostKeyChecking) {
	case "yes", "true":
		return &HostKeyError{
			short: fmt.Sprintf("no %s host key is known for %s (StrictHostKeyChecking yes)", kind, hk.addr),
			detail: fmt.Sprintf("The server offered %s key fingerprint %s. Verify it with the host's administrator, then add it:\n"+
				"  ssh-keyscan %s >> %s\n"+
				"(or connect once with StrictHostKeyChecking accept-new)",
				kind, fp, keyscanArgs(hk.h), hk.suggestFile()),
		}
	case "no", "false", "accept-new":
		hk.add(key)
		return nil
	}
	// "ask" and OpenSSH's default.
	question := fmt.Sprintf("The authenticity of host '%s (%s)' can't be established.\n"+
		"%s key fingerprint is %s.\n"+
		"Are you sure you want to continue connecting (yes/no)?", hk.addr, ip, kind, fp)
	if hk.opts.Prompter == nil {
		return fmt.Errorf("%w: the authenticity of host '%s' can't be established (%s key fingerprint %s) "+
			"and there is no terminal to confirm it; add the key to %s or set StrictHostKeyChecking accept-new",
			ErrHostKey, hk.addr, kind, fp, hk.suggestFile())
	}
	var ok bool
	var err error
	hk.g.pause(func() { ok, err = hk.opts.Prompter.Confirm(hk.ctx, question) })
	if err != nil {
		return fmt.Errorf("%w: confirm host key of %s: %w", ErrHostKey, hk.addr, err)
	}
	if !ok {
		return fmt.Errorf("%w: host key of %s (%s) not accepted", ErrHostKey, hk.addr, fp)
	}
	hk.add(key)
	return nil
}

// knownHostsLocks serialises additions to each known_hosts file (by its
// absolute path) within the process: a batch that accepts new keys on
// many connections to the same host:port at once must write one line.
var knownHostsLocks sync.Map // string → *sync.Mutex

func knownHostsLock(file string) *sync.Mutex {
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	mu, _ := knownHostsLocks.LoadOrStore(file, new(sync.Mutex))
	return mu.(*sync.Mutex)
}

// add appends the key to the first user known_hosts file, creating it (and
// its directory) as OpenSSH does, and tells the user. A failure to write is
// a warning: the key was accepted for this connection.
func (hk *hostKeyChecker) add(key gossh.PublicKey) {
	file := hk.writeFile()
	if file == "" {
		hk.opts.Warn(fmt.Sprintf("Warning: accepted the %s host key of '%s' for this connection only (UserKnownHostsFile none).", keyKind(key), hk.addr))
		return
	}
	added, err := appendKnownHost(file, hk.addr, key, hk.h.HashKnownHosts)
	if err != nil {
		hk.opts.Warn(fmt.Sprintf("Warning: failed to add the host to the list of known hosts (%s): %v", file, err))
		return
	}
	if !added { // another connection of this process added it meanwhile
		return
	}
	hk.opts.Warn(fmt.Sprintf("Warning: Permanently added '%s' (%s) to the list of known hosts.", hk.addr, keyKind(key)))
}

// writeFile is the known_hosts file new keys go to: the first user file;
// "" when the config names none (UserKnownHostsFile none): then nothing is
// written, as with OpenSSH.
func (hk *hostKeyChecker) writeFile() string {
	files := userKnownHostsFiles(hk.h)
	if len(files) == 0 {
		return ""
	}
	return expandLocal(files[0])
}

// suggestFile is the known_hosts file to name in advice.
func (hk *hostKeyChecker) suggestFile() string {
	if f := hk.writeFile(); f != "" {
		return f
	}
	return "~/.ssh/known_hosts"
}

// appendKnownHost adds "addr key" to file unless file already holds that
// key for addr: it was read when the connection started, and a concurrent
// connection to the same host may have added it since. added is false
// when nothing was written.
//
// With hash (HashKnownHosts yes) the name is written hashed, as OpenSSH
// writes it: |1|base64(salt)|base64(HMAC-SHA1(salt, name)).
func appendKnownHost(file, addr string, key gossh.PublicKey, hash bool) (added bool, err error) {
	mu := knownHostsLock(file)
	mu.Lock()
	defer mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return false, err
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return false, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return false, err
	}
	if knownHostsHas(file, data, addr, key) {
		return false, nil
	}
	line := knownhosts.Line([]string{addr}, key) + "\n"
	if hash {
		line = knownhosts.HashHostname(knownhosts.Normalize(addr)) + " " +
			strings.TrimSpace(string(gossh.MarshalAuthorizedKey(key))) + "\n"
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		line = "\n" + line
	}
	if _, err := f.WriteString(line); err != nil {
		return false, err
	}
	return true, f.Close()
}

// knownHostsHas reports whether data, the content of known_hosts file,
// lists key for addr (a known_hosts name, hashed entries included).
func knownHostsHas(file string, data []byte, addr string, key gossh.PublicKey) bool {
	if len(data) == 0 {
		return false
	}
	cb, err := loadKnownHosts([]string{file}, [][]byte{data}, func(string) {})
	if err != nil {
		return false
	}
	host, port := addr, "22"
	if h, p, err := net.SplitHostPort(addr); err == nil && strings.HasPrefix(addr, "[") {
		host, port = h, p
	}
	return cb(net.JoinHostPort(host, port), dummyAddr, key) == nil
}

// changedWarning is OpenSSH's warning for a host whose key changed.
func changedWarning(addr string, key gossh.PublicKey, want []knownhosts.KnownKey) string {
	var b strings.Builder
	b.WriteString("@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n")
	b.WriteString("@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n")
	b.WriteString("@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n")
	b.WriteString("IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\n")
	b.WriteString("Someone could be eavesdropping on you right now (man-in-the-middle attack)!\n")
	b.WriteString("It is also possible that a host key has just been changed.\n")
	fmt.Fprintf(&b, "The fingerprint for the %s key sent by the remote host is\n%s.\n",
		keyKind(key), gossh.FingerprintSHA256(key))
	b.WriteString("Please contact your system administrator.\n")
	fmt.Fprintf(&b, "Add correct host key in %s to get rid of this message.\n", want[0].Filename)
	for _, k := range want {
		fmt.Fprintf(&b, "Offending %s key in %s:%d\n", keyKind(k.Key), k.Filename, k.Line)
	}
	fmt.Fprintf(&b, "Host key for %s has changed and you have requested strict checking.\n", addr)
	b.WriteString("Host key verification failed.")
	return b.String()
}

// keyKind is OpenSSH's short name of a key type: ED25519, RSA, ECDSA, …
func keyKind(k gossh.PublicKey) string {
	t := k.Type()
	if c, ok := k.(*gossh.Certificate); ok {
		t = c.Key.Type()
	}
	switch {
	case t == gossh.KeyAlgoED25519:
		return "ED25519"
	case t == gossh.KeyAlgoRSA:
		return "RSA"
	case strings.HasPrefix(t, "ecdsa-"):
		return "ECDSA"
	case t == gossh.KeyAlgoSKED25519:
		return "ED25519-SK"
	case t == gossh.KeyAlgoSKECDSA256:
		return "ECDSA-SK"
	}
	return strings.ToUpper(t)
}

// knownHostsAddr is the name OpenSSH looks up and writes in known_hosts:
// the lower-cased HostName, as "[host]:port" when the port is not 22.
func knownHostsAddr(h *HostConfig) string {
	return knownhosts.Normalize(queryAddr(h))
}

// queryAddr is the host as knownhosts' callback wants it: "host:port" even
// for port 22 (the callback normalises it to the known_hosts form itself,
// and fails on a bare "host").
func queryAddr(h *HostConfig) string {
	return net.JoinHostPort(strings.ToLower(h.HostName), strconv.Itoa(portOf(h)))
}

// remoteName is the connected address in known_hosts form, for OpenSSH's
// "host 'name (address)'"; through a jump host only the name is known.
func remoteName(remote net.Addr, addr string) string {
	if ta, ok := remote.(*net.TCPAddr); ok && ta.IP != nil && !ta.IP.IsUnspecified() {
		return knownhosts.Normalize(ta.String())
	}
	return addr
}

func keyscanArgs(h *HostConfig) string {
	if p := portOf(h); p != 22 {
		return "-p " + strconv.Itoa(p) + " " + h.HostName
	}
	return h.HostName
}

// userKnownHostsFiles is h.UserKnownHostsFiles, or OpenSSH's defaults.
func userKnownHostsFiles(h *HostConfig) []string {
	if len(h.UserKnownHostsFiles) > 0 {
		var files []string
		for _, f := range h.UserKnownHostsFiles {
			if f != "none" {
				files = append(files, f)
			}
		}
		return files
	}
	return []string{"~/.ssh/known_hosts", "~/.ssh/known_hosts2"}
}

// expandLocal expands a leading "~/" to the local user's home.
func expandLocal(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// loadKnownHosts is knownhosts.New over files, except that lines x/crypto
// cannot parse (a key type it does not know, a damaged line) are skipped
// with a warning, as OpenSSH does, instead of failing every dial. Such a
// file is read from a copy with those lines blanked, so that line numbers
// in messages stay right; reported file names are mapped back.
func loadKnownHosts(files []string, contents [][]byte, warn func(string)) (gossh.HostKeyCallback, error) {
	paths := slices.Clone(files)
	real := map[string]string{}
	for i, data := range contents {
		lines := bytes.Split(data, []byte("\n"))
		bad := 0
		for n, line := range lines {
			if !validKnownHostsLine(line) {
				warn(fmt.Sprintf("Warning: %s:%d: ignoring a line that cannot be parsed", files[i], n+1))
				lines[n] = nil
				bad++
			}
		}
		if bad == 0 {
			continue
		}
		tmp, err := os.CreateTemp("", "agent-known_hosts-")
		if err != nil {
			return nil, err
		}
		defer os.Remove(tmp.Name())
		_, err = tmp.Write(bytes.Join(lines, []byte("\n")))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		paths[i], real[tmp.Name()] = tmp.Name(), files[i]
	}
	cb, err := knownhosts.New(paths...) // reads the files now
	if err != nil || len(real) == 0 {
		return cb, err
	}
	return func(hostname string, remote net.Addr, key gossh.PublicKey) error {
		err := cb(hostname, remote, key)
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case errors.As(err, &ke):
			for i, k := range ke.Want {
				if f, ok := real[k.Filename]; ok {
					ke.Want[i].Filename = f
				}
			}
		case errors.As(err, &re):
			if f, ok := real[re.Revoked.Filename]; ok {
				re.Revoked.Filename = f
			}
		}
		return err
	}, nil
}

// validKnownHostsLine reports whether knownhosts can parse line (blank
// lines and comments included).
func validKnownHostsLine(line []byte) bool {
	f := bytes.Fields(line)
	if len(f) == 0 || f[0][0] == '#' {
		return true
	}
	if f[0][0] == '@' {
		if m := string(f[0]); m != "@cert-authority" && m != "@revoked" {
			return false
		}
		f = f[1:]
	}
	if len(f) < 3 || f[0][0] == '@' {
		return false
	}
	if f[0][0] != '|' {
		for _, p := range strings.Split(string(f[0]), ",") {
			if p == "!" || strings.HasPrefix(strings.TrimPrefix(p, "!"), "[") && !validHostPort(strings.TrimPrefix(p, "!")) {
				return false
			}
		}
	} else if _, _, err := decodeHashedName(string(f[0])); err != nil {
		return false
	}
	_, _, _, _, _, err := gossh.ParseKnownHosts(line)
	return err == nil
}

func validHostPort(p string) bool {
	_, _, err := net.SplitHostPort(p)
	return err == nil
}

// decodeHashedName checks a "|1|salt|hash" name as knownhosts does.
func decodeHashedName(s string) (salt, hash []byte, err error) {
	parts := strings.Split(s, "|")
	if len(parts) != 4 || parts[0] != "" || parts[1] != "1" {
		return nil, nil, errors.New("bad hashed host name")
	}
	if salt, err = base64.StdEncoding.DecodeString(parts[2]); err != nil {
		return nil, nil, err
	}
	hash, err = base64.StdEncoding.DecodeString(parts[3])
	return salt, hash, err
}

var dummyAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}

var probeKey = sync.OnceValue(func() gossh.PublicKey {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	k, err := gossh.NewPublicKey(pub)
	if err != nil {
		panic(err)
	}
	return k
})
