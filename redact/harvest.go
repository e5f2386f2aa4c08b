package redact

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxHarvest is the largest file Harvest reads: configuration and key
// files are small, but an .env of generated flags or a dump is not;
// past it a file is data. Files up to maxParsed are also read as a
// whole document (JSON, YAML); larger ones line by line only.
const MaxHarvest = 1 << 20

// maxParsed is the largest text HarvestText parses as a JSON or YAML
// document.
const maxParsed = 64 << 10

// Reader reads a host's files (a transport.Transport is one).
type Reader interface {
	Stat(ctx context.Context, path string) (fs.FileInfo, error)
	ReadFile(ctx context.Context, path string, w io.Writer) (int64, error)
}

// Harvest reads each of paths through r — regular files of at most
// MaxHarvest bytes; others, and files that cannot be read, are skipped —
// and adds to the set (as Found) the values of their secret-named keys and
// their private keys' bodies (HarvestText). It returns how many values it
// added. Reading a FIFO or a device is never tried: Stat says what the
// path is first.
func (s *Set) Harvest(ctx context.Context, r Reader, paths []string) int {
	if s == nil {
		return 0
	}
	n := 0
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] || ctx.Err() != nil {
			continue
		}
		seen[p] = true
		n += s.HarvestFile(ctx, r, p, nil)
	}
	return n
}

// HarvestFile is Harvest for one file whose FileInfo the caller may know
// already (nil: Harvest asks r).
func (s *Set) HarvestFile(ctx context.Context, r Reader, p string, fi fs.FileInfo) int {
	if s == nil {
		return 0
	}
	if fi == nil {
		var err error
		if fi, err = r.Stat(ctx, p); err != nil {
			return 0
		}
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxHarvest || fi.Size() == 0 {
		return 0
	}
	var buf bytes.Buffer
	if _, err := r.ReadFile(ctx, p, &limitWriter{w: &buf, n: MaxHarvest}); err != nil {
		return 0
	}
	return s.HarvestData(p, buf.Bytes())
}

// HarvestData is HarvestText for a file's bytes: an archive or a
// compressed file (gzip, bzip2, tar, zip: a backup.sql.gz, a site.zip)
// is read as the files it holds (harvest_archive.go), so that `zcat FILE
// | base64` or `unzip -p FILE | rev` hides their secrets.
func (s *Set) HarvestData(name string, data []byte) int {
	return s.harvestData(name, data, 0)
}

func (s *Set) harvestData(name string, data []byte, depth int) int {
	if s == nil {
		return 0
	}
	if depth < maxArchiveDepth {
		if ms := unpacked(name, data); ms != nil {
			n := 0
			for _, m := range ms {
				n += s.harvestData(m.name, m.data, depth+1)
			}
			return n
		}
	}
	return s.HarvestText(name, string(data))
}

// limitWriter fails once more than n bytes are written (a file that grew
// after Stat).
type limitWriter struct {
	w io.Writer
	n int
}

var errTooLarge = errors.New("larger than redact.MaxHarvest")

func (l *limitWriter) Write(p []byte) (int, error) {
	if len(p) > l.n {
		return 0, errTooLarge
	}
	l.n -= len(p)
	return l.w.Write(p)
}

// HarvestText adds the secrets of a structured file's text (name is its
// path: .netrc and .pgpass are known by name) to the set as Found: the
// values of keys whose names say secret (SecretName) in JSON (any depth),
// YAML, TOML, INI, .env, Java properties, npmrc (`key = value`,
// `key: value`, `export KEY=value`, `"key": "value"`), netrc's password
// and account, pgpass's password field, and the bodies of PEM private
// keys. It returns how many values it added.
func (s *Set) HarvestText(name, text string) int {
	if s == nil || text == "" {
		return 0
	}
	n := 0
	add := func(key, value string) { // at most maxLearnPerText (guard.go)
		if n >= maxLearnPerText {
			return
		}
		if s.Add(key, value, Found) {
			n++
		}
		// a value in base64 (docker's auths, a basic auth header, a
		// Kubernetes Secret's data): what it decodes to, and the password
		// part of a user:password; also when the value was known already
		// (the patterns saw `password: BASE64` first)
		{
			d, ok := decodedText(value)
			if !ok {
				return
			}
			// kubeconfig's client-key-data: base64 of a PEM key
			for _, block := range pemRE.FindAllString(d, -1) {
				if n < maxLearnPerText && s.Add("PRIVATE_KEY", block, Found) {
					n++
				}
			}
			if n < maxLearnPerText && s.Add(key, d, Found) {
				n++
				if _, pw, ok := strings.Cut(d, ":"); ok && n < maxLearnPerText && s.Add(key, pw, Found) {
					n++
				}
			}
		}
	}
	if strings.HasPrefix(text, sqliteMagic) { // a SQLite database
		return n + s.harvestSQLite([]byte(text))
	}
	for _, block := range pemRE.FindAllString(text, -1) {
		add("PRIVATE_KEY", block)
	}
	before := s.Len()
	s.String(text) // what the patterns find (URL passwords, bearer tokens, …) is learned
	n += s.Len() - before
	// a file that is its secret: /run/secrets/db_password,
	// ~/.vault-token, api.key holding one word (after the patterns: a
	// .git-credentials' URL is learnt whole, and its password first)
	if v := strings.TrimSpace(text); secretFile(name) && !strings.ContainsAny(v, " \t\r\n\x00") {
		add(strings.TrimLeft(path.Base(name), "."), v)
	}
	var doc any
	if t := strings.TrimSpace(text); len(t) <= maxParsed && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Unmarshal([]byte(t), &doc) == nil {
		walkJSON("", doc, add)
		return n
	}
	if len(text) <= maxParsed {
		harvestYAML(text, add)
	}
	harvestMarkup(text, add)
	harvestSQL(text, add)
	base := path.Base(name)
	lines := strings.Split(binaryLines(text), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' || strings.HasPrefix(line, "//") && !strings.Contains(line, "=") {
			continue
		}
		switch {
		case strings.Contains(base, "netrc"):
			f := strings.Fields(line)
			for i := 0; i+1 < len(f); i++ {
				if k := strings.ToLower(f[i]); k == "password" || k == "passwd" || k == "account" {
					add("NETRC_PASSWORD", f[i+1])
				}
			}
			continue
		case strings.Contains(base, "htpasswd") || base == "shadow":
			// user:hash (Apache's htpasswd, /etc/shadow): the hash, but
			// its first byte ("$apr1$…", "{SHA}…" read as a variable or
			// code, which the guard refuses)
			if f := strings.Split(line, ":"); len(f) >= 2 && len(f[1]) > 1 {
				add("PASSWORD_HASH", strings.TrimLeft(f[1], "${"))
			}
			continue
		case strings.Contains(base, "pgpass"):
			if f := strings.Split(line, ":"); len(f) >= 5 {
				add("PGPASS_PASSWORD", strings.Join(f[4:], ":"))
			}
			continue
		}
		if key, q, body, ok := tomlMultiline(line); ok {
			for !strings.Contains(body, q) && i+1 < len(lines) {
				i++
				body += "\n" + lines[i]
			}
			if body, _, _ = strings.Cut(body, q); SecretName(key) {
				add(key, strings.TrimSpace(body))
			}
			continue
		}
		key, value, ok := keyValue(line)
		if !ok {
			// Java properties' and netrc-like `key value`
			if f := strings.Fields(line); len(f) == 2 && SecretName(f[0]) {
				add(f[0], f[1])
			}
			continue
		}
		// TOML's inline tables: db = { user = "x", password = "y" }
		if strings.HasPrefix(value, "{") {
			for _, part := range strings.Split(strings.Trim(value, "{}"), ",") {
				if k, v, ok := keyValue(strings.TrimSpace(part)); ok && SecretName(k) {
					add(k, v)
				}
			}
			continue
		}
		if SecretName(key) {
			add(key, value)
		}
	}
	return n
}

// tomlMultiline splits the first line of a TOML multi-line string,
// `key = """body` (or ”'): its key, its quotes and the body that
// follows them on the line.
func tomlMultiline(line string) (key, quote, body string, ok bool) {
	k, v, ok := strings.Cut(line, "=")
	if !ok {
		return "", "", "", false
	}
	v = strings.TrimSpace(v)
	for _, q := range []string{`"""`, `'''`} {
		if strings.HasPrefix(v, q) {
			return strings.Trim(strings.TrimSpace(k), `"'`), q, v[3:], true
		}
	}
	return "", "", "", false
}

// binaryLines is text with the control bytes of a binary file (NUL and
// the like, but tab and CR, and bytes that are no UTF-8) read as line
// breaks: `strings` shows each run of text in it as a line of its own.
func binaryLines(text string) string {
	if !strings.ContainsRune(text, 0) {
		return text
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\r' || r == 0x7f || r == utf8.RuneError {
			return '\n'
		}
		return r
	}, text)
}

// harvestYAML calls add for each scalar under a secret-named key of text
// read as YAML (block scalars, flow maps and lists, any depth; each
// document of a stream, up to the first that is no YAML); nothing for a
// document that is no mapping or list.
func harvestYAML(text string, add func(key, value string)) {
	// each document of a stream (a ConfigMap, then a Secret)
	dec := yaml.NewDecoder(strings.NewReader(text))
	for range 64 {
		var doc any
		if dec.Decode(&doc) != nil {
			return
		}
		switch doc.(type) {
		case map[string]any, []any:
			walkJSON("", doc, func(key, value string) { add(key, strings.TrimSpace(value)) })
		}
	}
}

var (
	// PHP's define('DB_PASSWORD', 'x') and its like
	defineRE = regexp.MustCompile(`\bdefine\s*\(\s*['"]([^'"]+)['"]\s*,\s*['"]([^'"]*)['"]`)
	// XML's <password>x</password>
	xmlElemRE = regexp.MustCompile(`<([A-Za-z_][\w.:-]*)(?:\s[^<>]*)?>([^<>]+)</([A-Za-z_][\w.:-]*)>`)
	// XML's <property name="db.password" value="x"/>, <add key="…" value="…"/>
	xmlPairRE = regexp.MustCompile(`\b(?:name|key)\s*=\s*"([^"]*)"[^<>]*?\bvalue\s*=\s*"([^"]*)"`)
)

// harvestMarkup calls add for the secret-named values of PHP's define()
// and XML's elements and name/value attribute pairs.
func harvestMarkup(text string, add func(key, value string)) {
	if !strings.Contains(text, "define") && !strings.Contains(text, "<") {
		return
	}
	for _, m := range defineRE.FindAllStringSubmatch(text, -1) {
		if SecretName(m[1]) {
			add(m[1], m[2])
		}
	}
	for _, m := range xmlElemRE.FindAllStringSubmatch(text, -1) {
		if m[1] == m[3] && SecretName(m[1]) {
			add(m[1], strings.TrimSpace(m[2]))
		}
	}
	for _, m := range xmlPairRE.FindAllStringSubmatch(text, -1) {
		if SecretName(m[1]) {
			add(m[1], m[2])
		}
	}
}

// decodedText is v decoded from base64 (standard or URL, padded or not)
// when that gives printable ASCII text of at least MinLen bytes.
func decodedText(v string) (string, bool) {
	if len(v) < 12 || len(v) > 4096 {
		return "", false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(v)
		if err != nil || len(b) < MinLen {
			continue
		}
		for _, c := range b {
			if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\r' {
				return "", false
			}
		}
		return string(b), true
	}
	return "", false
}

// HarvestListing learns the secrets of a process listing: each line's
// arguments as the patterns see them (-pX, --password=X, URL passwords;
// once seen, always hidden) and its variables named secret (NAME=value
// lines, as /proc/PID/environ holds them). It returns how many values it
// added.
func (s *Set) HarvestListing(text string) int {
	if s == nil || text == "" {
		return 0
	}
	before := s.Len()
	s.String(text)
	n := s.Len() - before
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && n < maxLearnPerText && !strings.ContainsAny(k, " \t") && SecretName(k) && s.Add(k, v, Found) {
			n++
		}
	}
	return n
}

// secretFile reports whether a file's path says that what it holds is a
// secret: its name does (SecretName: db_password, .vault-token, api.key),
// or a directory above it is named secrets or credentials (Docker's and
// systemd's /run/secrets/NAME, /run/credentials/UNIT/NAME).
func secretFile(name string) bool {
	// its extension aside (password_policy.txt), unless that is what
	// says secret (api.key); .vault-token is all extension
	base := path.Base(name)
	if ext := path.Ext(base); ext != base && !secretWords[strings.ToLower(strings.TrimPrefix(ext, "."))] {
		base = strings.TrimSuffix(base, ext)
	}
	if SecretName(base) {
		return true
	}
	for d := path.Dir(name); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		switch strings.ToLower(path.Base(d)) {
		case "secrets", "credentials", ".secrets":
			return true
		}
	}
	return false
}

// walkJSON calls add for each string or number under a secret-named
// key; for an entry of a name/value list whose name says secret
// (Kubernetes' env: [{name: DB_PASSWORD, value: x}], ECS's, a parameter
// store's {Name, Value}) and the value of a secret-named object
// (Terraform's outputs); for a string that is an assignment to a
// secret-named variable ("Env": ["DB_PASSWORD=x"], docker inspect's);
// the secret-named values of a secret that is itself JSON
// (SecretString); and every value of a Kubernetes Secret's data and
// stringData.
func walkJSON(key string, v any, add func(key, value string)) {
	switch v := v.(type) {
	case map[string]any:
		var name, value any
		for k, x := range v {
			switch strings.ToLower(k) {
			case "name", "key":
				name = x
			case "value":
				value = x
			}
			walkJSON(k, x, add)
		}
		if n, ok := name.(string); ok && SecretName(n) {
			walkJSON(n, value, add)
		}
		// Terraform's outputs: "db_password": {"value": "x", "sensitive": true}
		if SecretName(key) && name == nil {
			walkJSON(key, value, add)
		}
		// a Kubernetes Secret: every value of its data and stringData
		if v["kind"] == "Secret" {
			for _, field := range []string{"data", "stringData"} {
				if m, ok := v[field].(map[string]any); ok {
					for k, x := range m {
						if x, ok := x.(string); ok {
							add(k, strings.TrimSpace(x))
						}
					}
				}
			}
		}
	case []any:
		for _, x := range v {
			walkJSON(key, x, add)
		}
	case string:
		if SecretName(key) {
			add(key, v)
			// a secret that is a JSON document (AWS Secrets Manager's
			// SecretString): its own secret-named values
			if t := strings.TrimSpace(v); len(t) <= maxParsed && strings.HasPrefix(t, "{") {
				var doc any
				if json.Unmarshal([]byte(t), &doc) == nil {
					walkJSON(key, doc, add)
				}
			}
		} else if k, val, ok := strings.Cut(v, "="); ok && k != "" && len(k) <= 64 && !strings.ContainsAny(k, " \t\n\"'") && SecretName(k) {
			add(k, val)
		}
	case float64, json.Number:
		if SecretName(key) {
			add(key, fmt.Sprint(v))
		}
	}
}

// keyValue splits a settings line: `key = value`, `key: value`,
// `export KEY=value`, `"key": "value",` (a JSON or YAML line), with the
// value's quotes, a trailing comma and an inline comment taken off.
func keyValue(line string) (key, value string, ok bool) {
	line = strings.TrimPrefix(line, "export ")
	line = strings.TrimPrefix(line, "- ")
	i := strings.IndexAny(line, "=:")
	// npmrc's //host/:_authToken=x: a key with ':' in it, no space before '='
	if eq := strings.IndexByte(line, '='); eq > 0 && !strings.ContainsAny(line[:eq], " \t\"'") {
		i = eq
	}
	if i <= 0 {
		return "", "", false
	}
	key = strings.Trim(strings.TrimSpace(line[:i]), `"'`)
	value = strings.TrimSpace(line[i+1:])
	value = strings.TrimSuffix(value, ",")
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') {
		if j := strings.IndexByte(value[1:], value[0]); j >= 0 {
			return key, value[1 : j+1], true
		}
	}
	if j := strings.Index(value, " #"); j >= 0 {
		value = strings.TrimSpace(value[:j])
	}
	return key, value, value != ""
}

// SecretName reports whether a settings key names a secret: one of its
// words (split at separators and camelCase, case-insensitive) is
// password, passwd, pass, pwd, secret, token, key, auth, credential(s),
// private, apikey or passphrase, or holds password, secret, token,
// credential, apikey or passphrase; unless its last word says the value
// is about the secret rather than the secret (key_file, token_url,
// password_min_length, secret_name).
func SecretName(key string) bool {
	words := nameWords(key)
	if len(words) == 0 {
		return false
	}
	if notSecretValue[words[len(words)-1]] && len(words) > 1 {
		return false
	}
	for _, w := range words {
		if secretWords[w] {
			return true
		}
		for _, part := range []string{"password", "passwd", "secret", "token", "credential", "apikey", "passphrase"} {
			if strings.Contains(w, part) {
				return true
			}
		}
	}
	return false
}

var (
	secretWords = map[string]bool{"password": true, "passwd": true, "pass": true, "pwd": true, "secret": true, "token": true,
		"key": true, "auth": true, "credential": true, "credentials": true, "private": true, "apikey": true, "passphrase": true,
		"bearer": true, "cookie": true, "signature": true, "jwt": true, "salt": true, "hmac": true, "session": true,
		"passcode": true, "otp": true, "psk": true, "pw": true, "privkey": true, "accesskey": true, "mnemonic": true, "oauth": true}
	notSecretValue = map[string]bool{"file": true, "path": true, "dir": true, "url": true, "uri": true, "name": true, "id": true,
		"type": true, "length": true, "len": true, "size": true, "format": true, "method": true, "algorithm": true, "expiry": true,
		"expires": true, "ttl": true, "enabled": true, "required": true, "policy": true, "prompt": true, "hint": true, "min": true,
		"max": true, "count": true, "version": true, "field": true, "header": true, "env": true, "location": true,
		"endpoint": true, "host": true, "port": true, "user": true, "username": true, "command": true, "cmd": true, "mode": true,
		"timeout": true, "lifetime": true, "driver": true, "store": true, "storage": true, "domain": true, "secure": true,
		"samesite": true, "prefix": true, "table": true, "handler": true, "class": true, "provider": true, "interval": true,
		"duration": true, "rounds": true, "cost": true, "httponly": true, "address": true, "manager": true, "bus": true}
)

// nameWords splits a key into lower-case words at non-alphanumerics and
// camelCase boundaries.
func nameWords(key string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(key)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}
