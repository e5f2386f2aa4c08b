// Package vault decrypts (and, for tests and tools, encrypts) Ansible
// Vault data: the $ANSIBLE_VAULT;1.1;AES256 and 1.2 (with a vault id)
// envelopes that ansible-vault writes, for whole files and for !vault
// values. It does no I/O besides reading password files (passwords.go).
//
// The format is Ansible's (parsing/vault/__init__.py, VaultAES256): the
// envelope's body is hex of "hex(salt)\nhex(hmac)\nhex(ciphertext)";
// PBKDF2-HMAC-SHA256 over the password and salt (10,000 rounds) gives 80
// bytes: the AES-256 key, the HMAC-SHA256 key and the CTR counter block.
// The HMAC of the ciphertext is checked before anything is decrypted, so
// a wrong password is told apart from damaged data.
package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Header is how every vaulted text starts.
const Header = "$ANSIBLE_VAULT;"

// DefaultID is the vault id of a secret given without a label, and of
// 1.1 envelopes (which carry none).
const DefaultID = "default"

const (
	iterations = 10000
	keyLen     = 32
	ivLen      = 16
	// maxEnvelope bounds what Parse accepts, so a stray huge file is
	// refused before it is hex-decoded.
	maxEnvelope = 64 << 20
)

// Errors Decrypt returns (wrapped).
var (
	// ErrNoSecret: the data is vaulted and no password was given.
	ErrNoSecret = errors.New("no vault password was given (use --vault-password-file, --vault-id or --ask-vault-pass)")
	// ErrWrongPassword: no password given matches the data's HMAC.
	ErrWrongPassword = errors.New("no vault password given can decrypt it (wrong password?)")
)

// IsEncrypted reports whether data is an Ansible Vault envelope.
func IsEncrypted(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte(Header))
}

// Envelope is a parsed vaulted text.
type Envelope struct {
	Version string // "1.1" or "1.2"
	Cipher  string // "AES256"
	ID      string // the vault id (1.2), else DefaultID
	salt    []byte
	mac     []byte
	crypted []byte
}

// Parse reads an envelope: the header line, then the hex body (its line
// breaks ignored). Anything else is an error saying what is wrong.
func Parse(data []byte) (*Envelope, error) {
	if len(data) > maxEnvelope {
		return nil, fmt.Errorf("vaulted text larger than %d bytes", maxEnvelope)
	}
	text := strings.TrimSpace(string(data))
	head, body, _ := strings.Cut(text, "\n")
	parts := strings.Split(strings.TrimSpace(head), ";")
	if len(parts) < 3 || parts[0] != strings.TrimSuffix(Header, ";") {
		return nil, fmt.Errorf("not an Ansible Vault header: %q", clip(head))
	}
	e := &Envelope{Version: strings.TrimSpace(parts[1]), Cipher: strings.TrimSpace(parts[2]), ID: DefaultID}
	switch e.Version {
	case "1.1", "1.2":
	default:
		return nil, fmt.Errorf("unsupported Ansible Vault format %q (want 1.1 or 1.2)", e.Version)
	}
	if e.Cipher != "AES256" {
		return nil, fmt.Errorf("unsupported Ansible Vault cipher %q (want AES256)", e.Cipher)
	}
	if len(parts) >= 4 {
		if e.Version != "1.2" {
			return nil, fmt.Errorf("a vault id in a %s header (only 1.2 has one)", e.Version)
		}
		e.ID = strings.TrimSpace(parts[3])
	} else if e.Version == "1.2" {
		return nil, errors.New("a 1.2 header without a vault id")
	}
	var hexBody strings.Builder
	for _, l := range strings.Split(body, "\n") {
		hexBody.WriteString(strings.TrimSpace(l))
	}
	inner, err := hex.DecodeString(hexBody.String())
	if err != nil {
		return nil, fmt.Errorf("vaulted text: body is not hex: %v", err)
	}
	fields := bytes.SplitN(inner, []byte("\n"), 3)
	if len(fields) != 3 {
		return nil, errors.New("vaulted text: body lacks salt, HMAC and ciphertext")
	}
	dec := func(name string, b []byte) ([]byte, error) {
		out, err := hex.DecodeString(string(bytes.TrimSpace(b)))
		if err != nil {
			return nil, fmt.Errorf("vaulted text: %s is not hex: %v", name, err)
		}
		return out, nil
	}
	if e.salt, err = dec("salt", fields[0]); err != nil {
		return nil, err
	}
	if e.mac, err = dec("HMAC", fields[1]); err != nil {
		return nil, err
	}
	if e.crypted, err = dec("ciphertext", fields[2]); err != nil {
		return nil, err
	}
	if len(e.mac) != sha256.Size {
		return nil, fmt.Errorf("vaulted text: HMAC is %d bytes, want %d", len(e.mac), sha256.Size)
	}
	if len(e.crypted) == 0 || len(e.crypted)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("vaulted text: ciphertext of %d bytes is not whole AES blocks", len(e.crypted))
	}
	return e, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// keys derives the AES key, HMAC key and counter block.
func keys(password, salt []byte) (aesKey, macKey, iv []byte, err error) {
	k, err := pbkdf2.Key(sha256.New, string(password), salt, iterations, 2*keyLen+ivLen)
	if err != nil {
		return nil, nil, nil, err
	}
	return k[:keyLen], k[keyLen : 2*keyLen], k[2*keyLen:], nil
}

// open decrypts e with password; ok is false when the HMAC does not match.
func (e *Envelope) open(password []byte) ([]byte, bool, error) {
	aesKey, macKey, iv, err := keys(password, e.salt)
	if err != nil {
		return nil, false, err
	}
	m := hmac.New(sha256.New, macKey)
	m.Write(e.crypted)
	if subtle.ConstantTimeCompare(m.Sum(nil), e.mac) != 1 {
		return nil, false, nil
	}
	block, err := aes.NewCipher(aesKey)
	if err != nil {
		return nil, false, err
	}
	plain := make([]byte, len(e.crypted))
	cipher.NewCTR(block, iv).XORKeyStream(plain, e.crypted)
	n := int(plain[len(plain)-1])
	if n == 0 || n > aes.BlockSize || n > len(plain) || !bytes.Equal(plain[len(plain)-n:], bytes.Repeat([]byte{byte(n)}, n)) {
		return nil, true, errors.New("vaulted text: bad padding after decryption")
	}
	return plain[:len(plain)-n], true, nil
}

// Secret is one vault password with its vault id (DefaultID when the
// operator gave none).
type Secret struct {
	ID       string
	Password []byte
}

// Keyring holds the vault passwords of a run. The zero value (or nil)
// has none: decrypting anything is ErrNoSecret.
type Keyring struct {
	secrets []Secret
}

// NewKeyring returns a keyring with secrets, tried in the order given.
func NewKeyring(secrets ...Secret) *Keyring {
	return &Keyring{secrets: secrets}
}

// Len is the number of passwords held.
func (k *Keyring) Len() int {
	if k == nil {
		return 0
	}
	return len(k.secrets)
}

// Passwords are the passwords held, for redaction.
func (k *Keyring) Passwords() []string {
	if k == nil {
		return nil
	}
	out := make([]string, 0, len(k.secrets))
	for _, s := range k.secrets {
		out = append(out, string(s.Password))
	}
	return out
}

// Decrypt opens vaulted data: the secrets whose id matches the
// envelope's first, then the others, as Ansible does when
// DEFAULT_VAULT_ID_MATCH is off.
func (k *Keyring) Decrypt(data []byte) ([]byte, error) {
	e, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if k.Len() == 0 {
		return nil, ErrNoSecret
	}
	order := make([]Secret, 0, len(k.secrets))
	for _, s := range k.secrets {
		if s.ID == e.ID {
			order = append(order, s)
		}
	}
	for _, s := range k.secrets {
		if s.ID != e.ID {
			order = append(order, s)
		}
	}
	for _, s := range order {
		plain, ok, err := e.open(s.Password)
		if err != nil {
			return nil, err
		}
		if ok {
			return plain, nil
		}
	}
	if e.ID != DefaultID {
		return nil, fmt.Errorf("vault id %q: %w", e.ID, ErrWrongPassword)
	}
	return nil, ErrWrongPassword
}

// Encrypt seals plain as ansible-vault encrypt does: format 1.1 when id
// is "" or DefaultID, else 1.2 with id; lines of 80 hex digits.
func Encrypt(plain, password []byte, id string) ([]byte, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	aesKey, macKey, iv, err := keys(password, salt)
	if err != nil {
		return nil, err
	}
	n := aes.BlockSize - len(plain)%aes.BlockSize
	padded := append(append([]byte(nil), plain...), bytes.Repeat([]byte{byte(n)}, n)...)
	block, err := aes.NewCipher(aesKey)
	if err != nil {
		return nil, err
	}
	crypted := make([]byte, len(padded))
	cipher.NewCTR(block, iv).XORKeyStream(crypted, padded)
	m := hmac.New(sha256.New, macKey)
	m.Write(crypted)
	inner := hex.EncodeToString(salt) + "\n" + hex.EncodeToString(m.Sum(nil)) + "\n" + hex.EncodeToString(crypted)
	body := hex.EncodeToString([]byte(inner))
	var b strings.Builder
	if id == "" || id == DefaultID {
		b.WriteString(Header + "1.1;AES256\n")
	} else {
		b.WriteString(Header + "1.2;AES256;" + id + "\n")
	}
	for len(body) > 80 {
		b.WriteString(body[:80] + "\n")
		body = body[80:]
	}
	b.WriteString(body + "\n")
	return []byte(b.String()), nil
}
