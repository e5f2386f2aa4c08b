package inventory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// This file is Ansible's script inventory plugin
// (plugins/inventory/script.py): the script is run with --list and
// prints a JSON object of groups; each group is {"hosts": [...], "vars":
// {...}, "children": [...]}, a list of hosts, or a mapping without those
// keys (a host named like the group, with those variables). "_meta":
// {"hostvars": {HOST: {...}}} gives the hosts' variables; without it the
// script is run with --host HOST for each host.

// maxScriptOutput bounds what an inventory script may print.
const maxScriptOutput = 256 << 20

// runScript runs the inventory script path with --list (and --host) and
// adds what it prints to inv.
func (inv *Inventory) runScript(path string) error {
	out, err := inv.runScriptArgs(path, "--list")
	if err != nil {
		return err
	}
	return inv.addScriptOutput(path, out, func(host string) ([]byte, error) {
		return inv.runScriptArgs(path, "--host", host)
	})
}

// addScriptOutput adds what an inventory script's --list printed (out);
// hostVars runs it with --host NAME when out has no _meta.hostvars.
func (inv *Inventory) addScriptOutput(path string, out []byte, hostVars func(host string) ([]byte, error)) error {
	fail := func(format string, a ...any) error {
		return &Error{File: path, Msg: "inventory script: " + fmt.Sprintf(format, a...)}
	}
	groups, err := decodeOrdered(out)
	if err != nil {
		return fail("--list did not print a JSON object of groups: %v", err)
	}
	var meta any
	hasMeta := false
	var hosts []*Host
	seen := map[*Host]bool{}
	for _, kv := range groups {
		if kv.key == "_meta" {
			if m, ok := kv.val.(map[string]any); ok {
				if hv, ok := m["hostvars"]; ok {
					meta, hasMeta = hv, true
				}
			}
			continue
		}
		added, err := inv.scriptGroup(kv.key, kv.val)
		if err != nil {
			return fail("group %q: %v", kv.key, err)
		}
		for _, h := range added {
			if !seen[h] {
				seen[h] = true
				hosts = append(hosts, h)
			}
		}
	}
	var metaMap map[string]any
	if hasMeta {
		m, ok := meta.(map[string]any)
		if !ok && meta != nil {
			return fail("_meta.hostvars must be a mapping of hosts, found %s", jsonKind(meta))
		}
		metaMap = m
	}
	for _, h := range hosts {
		var vars any = map[string]any{}
		if hasMeta {
			if v, ok := metaMap[h.Name]; ok {
				vars = v
			}
		} else {
			out, err := hostVars(h.Name)
			if err != nil {
				return err
			}
			if vars, err = decodeValue(out); err != nil {
				return fail("--host %s did not print JSON: %v", h.Name, err)
			}
		}
		m, ok := vars.(map[string]any)
		if !ok {
			return fail("the variables of host %q must be a mapping, found %s", h.Name, jsonKind(vars))
		}
		for k, v := range m {
			v, err := inv.unvaultJSON(v)
			if err != nil {
				return fail("host %q variable %q: %v", h.Name, k, err)
			}
			h.setVar(k, v, inv.at(0))
		}
	}
	return nil
}

// scriptGroup is the script plugin's _parse_group; it returns the hosts
// it named.
func (inv *Inventory) scriptGroup(name string, data any) ([]*Host, error) {
	if name == "" {
		return nil, errors.New("empty group name")
	}
	g := inv.addGroup(name)
	m, ok := data.(map[string]any)
	switch {
	case !ok:
		m = map[string]any{"hosts": data}
	case !hasAnyKey(m, "hosts", "vars", "children"):
		m = map[string]any{"hosts": []any{name}, "vars": m}
	}
	var added []*Host
	if hs, ok := m["hosts"]; ok {
		list, ok := hs.([]any)
		if !ok {
			return nil, fmt.Errorf("hosts must be a list, found %s", jsonKind(hs))
		}
		for _, x := range list {
			hn, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("host names must be strings, found %s", jsonKind(x))
			}
			if hn == "" {
				continue
			}
			if inv.hostIdx[hn] == nil {
				if inv.expanded++; inv.expanded > maxExpanded {
					return nil, fmt.Errorf("the inventory lists more than %d hosts", maxExpanded)
				}
			}
			h, _ := inv.addHost(hn, g)
			added = append(added, h)
		}
	}
	if vs, ok := m["vars"]; ok {
		vars, ok := vs.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("vars must be a mapping, found %s", jsonKind(vs))
		}
		for k, v := range vars {
			v, err := inv.unvaultJSON(v)
			if err != nil {
				return nil, fmt.Errorf("variable %q: %v", k, err)
			}
			inv.setGroupVar(g, k, v, 0)
		}
	}
	if cs, ok := m["children"]; ok {
		var names []string
		switch c := cs.(type) {
		case []any:
			for _, x := range c {
				s, ok := x.(string)
				if !ok || s == "" {
					return nil, fmt.Errorf("child group names must be non-empty strings, found %s", jsonKind(x))
				}
				names = append(names, s)
			}
		case map[string]any:
			for k := range c {
				names = append(names, k)
			}
		default:
			return nil, fmt.Errorf("children must be a list, found %s", jsonKind(cs))
		}
		for _, cn := range names {
			if err := inv.addChild(g, inv.addGroup(cn), 0); err != nil {
				return nil, err
			}
		}
	}
	return added, nil
}

func hasAnyKey(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// unvaultJSON decrypts the {"__ansible_vault": TEXT} objects Ansible's
// JSON decoder understands (ansible-inventory --list prints them).
func (inv *Inventory) unvaultJSON(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["__ansible_vault"].(string); ok && len(x) == 1 {
			plain, err := inv.vault.Decrypt([]byte(s))
			if err != nil {
				return nil, err
			}
			return VaultString(plain), nil
		}
		if s, ok := x["__ansible_unsafe"].(string); ok && len(x) == 1 {
			return s, nil
		}
		for k, e := range x {
			d, err := inv.unvaultJSON(e)
			if err != nil {
				return nil, err
			}
			x[k] = d
		}
	case []any:
		for i, e := range x {
			d, err := inv.unvaultJSON(e)
			if err != nil {
				return nil, err
			}
			x[i] = d
		}
	}
	return v, nil
}

// runScriptArgs runs the script with args, bounded by the inventory's
// script timeout; its process group is killed when the time is up. A
// non-zero exit, a timeout or output that is not UTF-8 is an error
// carrying the script's stderr.
func (inv *Inventory) runScriptArgs(path string, args ...string) ([]byte, error) {
	timeout := inv.scriptTimeout
	if timeout <= 0 {
		timeout = DefaultScriptTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The whole group: a shell script's children hold the pipes.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 2048}
	lw := &capWriter{w: &stdout, max: maxScriptOutput}
	cmd.Stdout, cmd.Stderr = lw, stderr
	err := cmd.Run()
	what := fmt.Sprintf("inventory script %s", strings.Join(args, " "))
	errText := strings.TrimSpace(stderr.String())
	if errText != "" {
		errText = ": " + errText
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return nil, &Error{File: path, Msg: fmt.Sprintf("%s: did not finish within %s (killed)%s", what, timeout, errText)}
	case lw.over:
		return nil, &Error{File: path, Msg: fmt.Sprintf("%s: printed more than %d bytes", what, maxScriptOutput)}
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, &Error{File: path, Msg: fmt.Sprintf("%s: %v%s", what, ee, errText)}
		}
		return nil, &Error{File: path, Msg: fmt.Sprintf("%s: cannot run it: %v", what, err)}
	}
	out := stdout.Bytes()
	if !utf8.Valid(out) {
		return nil, &Error{File: path, Msg: fmt.Sprintf("%s: output is not valid UTF-8", what)}
	}
	return out, nil
}

// capWriter keeps up to max bytes and notes that more came.
type capWriter struct {
	w    io.Writer
	max  int
	n    int
	over bool
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.n+len(p) > c.max {
		c.over = true
		return 0, errors.New("output too large")
	}
	c.n += len(p)
	return c.w.Write(p)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// orderedPair is one key of a JSON object, in the order it came.
type orderedPair struct {
	key string
	val any
}

// maxJSONDepth bounds nesting in a script's output.
const maxJSONDepth = 200

// decodeOrdered decodes a JSON object keeping its keys' order (a later
// duplicate replaces the value in the first one's place, as a Python
// dict does). Values are decoded by decodeValue's rules.
func decodeOrdered(data []byte) ([]orderedPair, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonErr(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, found %s", tokenKind(tok))
	}
	var out []orderedPair
	index := map[string]int{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, jsonErr(err)
		}
		k, _ := kt.(string)
		v, err := readValue(dec, 1)
		if err != nil {
			return nil, err
		}
		if i, ok := index[k]; ok {
			out[i].val = v
			continue
		}
		index[k] = len(out)
		out = append(out, orderedPair{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("extra data after the JSON object")
	}
	return out, nil
}

// decodeValue decodes one JSON value: objects as map[string]any, arrays
// as []any, integers as int (json.Number beyond int64, as Python keeps
// them), other numbers as float64.
func decodeValue(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("extra data after the JSON value")
	}
	return v, nil
}

func readValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonErr(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, jsonErr(err)
				}
				k, _ := kt.(string)
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonErr(err)
			}
			return m, nil
		case '[':
			l := []any{}
			for dec.More() {
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonErr(err)
			}
			return l, nil
		}
		return nil, fmt.Errorf("unexpected %q", t)
	case json.Number:
		s := string(t)
		if strings.ContainsAny(s, ".eE") {
			f, err := t.Float64()
			if err != nil {
				return nil, fmt.Errorf("bad number %s", s)
			}
			return f, nil
		}
		neg := strings.HasPrefix(s, "-")
		v, err := pyIntValue(strings.TrimPrefix(s, "-"), 10)
		if err != nil {
			return nil, fmt.Errorf("bad number %s", s)
		}
		if neg {
			switch n := v.(type) {
			case int:
				return -n, nil
			case json.Number:
				return json.Number("-" + string(n)), nil
			}
		}
		return v, nil
	default:
		return t, nil // string, bool, nil
	}
}

func jsonErr(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("unexpected end of JSON")
	}
	return err
}

func tokenKind(t json.Token) string {
	switch t.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", t)
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string, VaultString:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// VaultString is a string decrypted from Ansible Vault: a secret. It
// prints as itself (connections and templates need the value), but
// marshals to JSON as "[vaulted]" so a listing never shows it.
type VaultString string

// MarshalJSON hides the value.
func (VaultString) MarshalJSON() ([]byte, error) { return []byte(`"[vaulted]"`), nil }

// Vaulted reports whether v is, or holds, a value decrypted from Ansible
// Vault.
func Vaulted(v any) bool {
	switch x := v.(type) {
	case VaultString:
		return true
	case map[string]any:
		for _, e := range x {
			if Vaulted(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if Vaulted(e) {
				return true
			}
		}
	}
	return false
}

func hasVault(v any) bool { return Vaulted(v) }
