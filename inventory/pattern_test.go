package inventory

import (
	"reflect"
	"strings"
	"testing"
)

const patternInventory = `
lone.example.com
[web]
web[01:05].example.com
[db]
db1.example.com
db2.example.com
web05.example.com
[prod:children]
web
db
[staging]
stage1
web01.example.com
`

func TestSelect(t *testing.T) {
	inv, err := ParseINI("p.ini", []byte(patternInventory))
	if err != nil {
		t.Fatal(err)
	}
	w := func(ns ...string) string { return strings.Join(ns, " ") }
	all := w("lone.example.com", "stage1", "web01.example.com", "web02.example.com", "web03.example.com",
		"web04.example.com", "web05.example.com", "db1.example.com", "db2.example.com")
	tests := []struct{ pattern, want string }{
		{"", all},
		{"all", all},
		{"*", all}, // "*" matches the group all first
		{"web", w("web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com", "web05.example.com")},
		{"db:staging", w("db1.example.com", "db2.example.com", "web05.example.com", "stage1", "web01.example.com")},
		{"db,staging", w("db1.example.com", "db2.example.com", "web05.example.com", "stage1", "web01.example.com")},
		{" db , staging ", w("db1.example.com", "db2.example.com", "web05.example.com", "stage1", "web01.example.com")},
		{"web:&db", w("web05.example.com")},
		{"web:!db", w("web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com")},
		// unions first, then intersections, then exclusions, whatever the order
		{"!db:web", w("web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com")},
		{"&staging:web", w("web01.example.com")},
		{"!web", w("lone.example.com", "stage1", "db1.example.com", "db2.example.com")},
		{"&prod", w("web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com", "web05.example.com", "db1.example.com", "db2.example.com")},
		{"prod:!web:&db", w("db1.example.com", "db2.example.com")},
		{"*.example.com", w("lone.example.com", "web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com", "web05.example.com", "db1.example.com", "db2.example.com")},
		{"web0[1-2]*", w("web01.example.com", "web02.example.com")},
		{"web0[!1-3]*", w("web04.example.com", "web05.example.com")},
		{"db?.example.com", w("db1.example.com", "db2.example.com")},
		{"we*", w("web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com", "web05.example.com")},
		{"web[0]", w("web01.example.com")},
		{"web[-1]", w("web05.example.com")},
		{"web[1:3]", w("web02.example.com", "web03.example.com", "web04.example.com")},
		{"web[3:]", w("web04.example.com", "web05.example.com")},
		{"web[0:4]", w("web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com", "web05.example.com")},
		{"web[2:0]", w("web03.example.com")}, // Ansible: a zero end selects one host
		{"web[3:1]", ""},
		{"web[1-2]", w("web02.example.com", "web03.example.com")},
		{"web[0:99]", w("web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com", "web05.example.com")},
		{"~web0[12]", w("web01.example.com", "web02.example.com")},
		{"~^db", w("db1.example.com", "db2.example.com", "web05.example.com")},
		{"~example", ""}, // a regex matches at the start, like Python's re.match
		{"~.*example", w("lone.example.com", "web01.example.com", "web02.example.com", "web03.example.com", "web04.example.com", "web05.example.com", "db1.example.com", "db2.example.com")},
		{"stage1", w("stage1")},
		{"stage1:stage1", w("stage1")},
		{"nosuch", ""},
		{"nosuch:web[0]", w("web01.example.com")},
		{"ungrouped", w("lone.example.com")},
		{"Web", ""}, // case-sensitive
	}
	for _, tt := range tests {
		hs, err := inv.Select(tt.pattern)
		if err != nil {
			t.Errorf("Select(%q): %v", tt.pattern, err)
			continue
		}
		if got := strings.Join(names(hs), " "); got != tt.want {
			t.Errorf("Select(%q):\n got %s\nwant %s", tt.pattern, got, tt.want)
		}
	}

	// Limit keeps inventory order.
	hs, err := inv.Limit("db:staging")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(names(hs), " "), w("stage1", "web01.example.com", "web05.example.com", "db1.example.com", "db2.example.com"); got != want {
		t.Errorf("Limit(db:staging):\n got %s\nwant %s", got, want)
	}
	if hs, _ := inv.Limit(""); len(hs) != 9 {
		t.Errorf("Limit(\"\") = %d hosts, want 9", len(hs))
	}

	// "~(?<=x)" is valid Python but not RE2: an error here, no match in Ansible.
	for _, bad := range []string{"web[5]", "web[-6]", "~web(", "~(?<=x)"} {
		if hs, err := inv.Select(bad); err == nil {
			t.Errorf("Select(%q) = %v, want an error", bad, names(hs))
		}
		if _, err := inv.Limit(bad); err == nil {
			t.Errorf("Limit(%q): want an error", bad)
		}
	}
}

func TestSplitPattern(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"web", []string{"web"}},
		{"web:db", []string{"web", "db"}},
		{"web:&prod:!db", []string{"web", "&prod", "!db"}},
		{"web,db, ,x", []string{"web", "db", "x"}},
		{"web[0:4]", []string{"web[0:4]"}},
		{"web[0:4]:db", []string{"web[0:4]", "db"}},
		{"host:22", []string{"host:22"}},
		{"fe80::1", []string{"fe80::1"}},
		{"a b:c", []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		if got := SplitPattern(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitPattern(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestGlobRegexp(t *testing.T) {
	tests := []struct {
		glob, name string
		match      bool
	}{
		{"*", "", true},
		{"web*", "web01", true},
		{"web*", "xweb", false},
		{"w?b", "web", true},
		{"w?b", "wb", false},
		{"[abc]x", "bx", true},
		{"[!abc]x", "bx", false},
		{"[!abc]x", "dx", true},
		{"[a-c]x", "cx", true},
		{"[c-a]x", "bx", false},
		{"[]]x", "]x", true},
		{"[x", "[x", true},
		{"a.b", "axb", false},
		{"a+b", "a+b", true},
		{"[\\]x", "\\x", true},
		{"[^a]x", "^x", true},
		{"[!]", "!", false},
	}
	for _, tt := range tests {
		re, err := compilePattern(tt.glob)
		if err != nil {
			t.Errorf("compilePattern(%q): %v", tt.glob, err)
			continue
		}
		if got := re.MatchString(tt.name); got != tt.match {
			t.Errorf("glob %q on %q = %v, want %v (regexp %s)", tt.glob, tt.name, got, tt.match, re)
		}
	}
}
