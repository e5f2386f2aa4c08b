package inventory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFiles adds the testdata inventories of one format to f's corpus.
func seedFiles(f *testing.F, yaml bool) {
	files, _ := filepath.Glob("testdata/compare/*")
	for _, file := range files {
		isYAML := strings.HasSuffix(file, ".yml") || strings.HasSuffix(file, ".yaml") || strings.HasSuffix(file, "_yaml")
		if isYAML != yaml {
			continue
		}
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
}

// checkParsed is what must hold whatever the input: a parse either fails
// with an *Error naming the file, or gives an inventory whose queries work.
func checkParsed(t *testing.T, inv *Inventory, err error) {
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.File != "f" {
			t.Fatalf("error %v (%T) is not an *Error naming the file", err, err)
		}
		return
	}
	hosts := inv.Hosts()
	for _, h := range hosts {
		inv.HostVars(h)
		inv.GroupNames(h)
	}
	if len(hosts) != len(inv.hosts) {
		t.Fatalf("all has %d hosts, the inventory %d", len(hosts), len(inv.hosts))
	}
	if _, err := inv.Select("all:!ungrouped"); err != nil {
		t.Fatalf("Select: %v", err)
	}
}

func FuzzParseINI(f *testing.F) {
	seedFiles(f, false)
	for _, s := range []string{
		"[web\nh\n", "web[01:03]\n", "h x=[1,{'a':(2,)}] y=\"q\\\"\"\n", "[a:children]\nb\n[b]\n",
		"[2001:db8::[1:3]]:22\n", "x[a:Z:2]\n", "h v=-(1)\n", "[g:vars]\nk='''t'''\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := ParseINI("f", data)
		checkParsed(t, inv, err)
	})
}

func FuzzParseYAML(f *testing.F) {
	seedFiles(f, true)
	for _, s := range []string{
		"all:\n  hosts:\n    a:\n", "g:\n  hosts: x\n", "a: &x {children: {b: *x}}\n",
		"g:\n  hosts:\n    h: {<<: [{a: 1}, {b: 2}]}\n", "g: {hosts: {w[1:3]: {v: 0x1f}}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := ParseYAML("f", data)
		checkParsed(t, inv, err)
	})
}

func FuzzPattern(f *testing.F) {
	inv, err := ParseINI("p.ini", []byte(patternInventory))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"", "all", "web:&db:!x", "web[0:2]", "web[-1]", "~^w.*", "*.example.com", "a,b,,c",
		"[x", "web[", "~(", "web[99999999999999999999]", "!&", "&!web", "[!]]", "fe80::1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		if strings.Contains(pattern, "@") {
			return // Limit reads @FILE; Select does not
		}
		sel, err := inv.Select(pattern)
		if err != nil {
			return
		}
		lim, err := inv.Limit(pattern)
		if err != nil {
			t.Fatalf("Select(%q) works but Limit fails: %v", pattern, err)
		}
		if len(sel) != len(lim) {
			t.Fatalf("Select(%q) gives %d hosts, Limit %d", pattern, len(sel), len(lim))
		}
		seen := map[*Host]bool{}
		for _, h := range sel {
			if seen[h] {
				t.Fatalf("Select(%q) gives %s twice", pattern, h.Name)
			}
			seen[h] = true
		}
	})
}

func FuzzPyLiteral(f *testing.F) {
	for _, s := range []string{"1", "'a' 'b'", "[1, (2,), {3: 4}]", "-(1)", "0x_1", "b'\\x00'", "'\\777'", "1e400", "{True: 1, 1: 2}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		iniValue(s)
	})
}

// FuzzScriptOutput feeds inventory-script output (--list, and the same
// bytes for every --host) to the script plugin's reader: an error or a
// consistent inventory, never a panic.
func FuzzScriptOutput(f *testing.F) {
	for _, s := range []string{
		`{"web": {"hosts": ["a", "b"], "vars": {"x": 1}, "children": ["db"]}, "_meta": {"hostvars": {"a": {"y": 2.5}}}}`,
		`{"g": ["h1", "h2"], "solo": {"k": "v"}}`, `{"g": {"hosts": "notalist"}}`, `{"_meta": {"hostvars": []}}`,
		`{"a": {"children": ["b"]}, "b": {"children": ["a"]}}`, `{"g": {"hosts": [1]}}`, `[1]`, `{"g": {"hosts": ["h"]}} x`,
		`{"g": {"vars": {"v": {"__ansible_vault": "$ANSIBLE_VAULT;1.1;AES256\n00"}}}}`, `{"g": {"hosts": ["h"]}}`,
		`{"n": {"hosts": ["h"], "vars": {"big": 123456789012345678901234567890, "neg": -5, "f": 1e3}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inv := newInventory("s")
		inv.addSource("s")
		err := inv.addScriptOutput("s", data, func(string) ([]byte, error) { return data, nil })
		if err == nil {
			err = inv.finish()
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "s") {
				t.Fatalf("error does not name the script: %v", err)
			}
			return
		}
		checkParsed(t, inv, nil)
	})
}
