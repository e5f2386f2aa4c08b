package inventory

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// dump renders what a test checks of an inventory: each host in inventory
// order with its groups and merged vars (as sorted JSON), then each group
// reachable from all with its direct hosts and children.
func dump(inv *Inventory) string {
	var b strings.Builder
	for _, h := range inv.Hosts() {
		v, _ := json.Marshal(inv.HostVars(h)) // map keys come out sorted
		fmt.Fprintf(&b, "host %s [%s] %s\n", h.Name, strings.Join(inv.GroupNames(h), ","), v)
	}
	for _, g := range inv.Groups() {
		var hs, cs []string
		for _, h := range g.Hosts {
			hs = append(hs, h.Name)
		}
		for _, c := range g.Children {
			cs = append(cs, c.Name)
		}
		fmt.Fprintf(&b, "group %s hosts=[%s] children=[%s]\n", g.Name, strings.Join(hs, ","), strings.Join(cs, ","))
	}
	return b.String()
}

func TestParseINI(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "ungrouped and groups",
			in:   "a\n[web]\nw1\nw2 x=1\n[db]\nd1\nw1\n",
			want: `host a [ungrouped] {}
host w1 [db,web] {}
host w2 [web] {"x":1}
host d1 [db] {}
group all hosts=[] children=[ungrouped,web,db]
group ungrouped hosts=[a] children=[]
group web hosts=[w1,w2] children=[]
group db hosts=[d1,w1] children=[]
`,
		},
		{
			name: "ranges: zero padding, letters, steps, several ranges, ports",
			in:   "[r]\nweb[08:11].example.com\ndb-[a:c]\nn[1:10:4]\nx[1:2]y[a:b]\nip10.0.0.[1:2]:2222\n",
			want: `host web08.example.com [r] {}
host web09.example.com [r] {}
host web10.example.com [r] {}
host web11.example.com [r] {}
host db-a [r] {}
host db-b [r] {}
host db-c [r] {}
host n1 [r] {}
host n5 [r] {}
host n9 [r] {}
host x1ya [r] {}
host x1yb [r] {}
host x2ya [r] {}
host x2yb [r] {}
host ip10.0.0.1 [r] {"ansible_port":2222}
host ip10.0.0.2 [r] {"ansible_port":2222}
group all hosts=[] children=[ungrouped,r]
group ungrouped hosts=[] children=[]
group r hosts=[web08.example.com,web09.example.com,web10.example.com,web11.example.com,db-a,db-b,db-c,n1,n5,n9,x1ya,x1yb,x2ya,x2yb,ip10.0.0.1,ip10.0.0.2] children=[]
`,
		},
		{
			name: "vars precedence: all < parent < child < host, same depth by name",
			in: `[all:vars]
v=all
[p:children]
c
[p:vars]
v=p
pv=p
[c]
h1 v=host
h2
[c:vars]
v=c
[b]
h2
[b:vars]
v=b
[a]
h2
[a:vars]
v=a
`,
			// h2 comes first: all's own children (b, a) are walked before
			// grandchildren (c), as Ansible does.
			want: `host h2 [a,b,c,p] {"pv":"p","v":"c"}
host h1 [c,p] {"pv":"p","v":"host"}
group all hosts=[] children=[ungrouped,p,b,a]
group ungrouped hosts=[] children=[]
group p hosts=[] children=[c]
group c hosts=[h1,h2] children=[]
group b hosts=[h2] children=[]
group a hosts=[h2] children=[]
`,
		},
		{
			name: "ansible_group_priority orders groups of one depth",
			in:   "[a]\nh\n[b]\nh\n[a:vars]\nv=a\nansible_group_priority=5\n[b:vars]\nv=b\n",
			want: `host h [a,b] {"v":"a"}
group all hosts=[] children=[ungrouped,a,b]
group ungrouped hosts=[] children=[]
group a hosts=[h] children=[]
group b hosts=[h] children=[]
`,
		},
		{
			name: "children before declaration; vars before the group's section",
			in:   "[top:children]\nmid\n[mid:vars]\nx=1\n[mid:children]\nleaf\n[leaf]\nl1\n[mid]\n",
			want: `host l1 [leaf,mid,top] {"x":1}
group all hosts=[] children=[ungrouped,top]
group ungrouped hosts=[] children=[]
group top hosts=[] children=[mid]
group mid hosts=[] children=[leaf]
group leaf hosts=[l1] children=[]
`,
		},
		{
			name: "a host repeated: vars merge, the first port sticks",
			in:   "h:2201 a=1 b=1\n[g]\nh:2202 b=2\n",
			want: `host h [g] {"a":1,"ansible_port":2201,"b":2}
group all hosts=[] children=[ungrouped,g]
group ungrouped hosts=[] children=[]
group g hosts=[h] children=[]
`,
		},
		{
			name: "comments, blank lines, quoting",
			in:   "; a comment\n  # another\n\nh1 msg=\"hello world\" q='it''s' path=/a#b # trailing\n[g] # comment\nh2\n",
			want: `host h1 [ungrouped] {"msg":"hello world","path":"/a","q":"its"}
host h2 [g] {}
group all hosts=[] children=[ungrouped,g]
group ungrouped hosts=[h1] children=[]
group g hosts=[h2] children=[]
`,
		},
		{
			name: "hosts in [all] go to ungrouped too",
			in:   "[all]\na\n[all:vars]\nx=1\n",
			want: `host a [ungrouped] {"x":1}
group all hosts=[a] children=[ungrouped]
group ungrouped hosts=[a] children=[]
`,
		},
		{
			name: "IPv6 with a port in brackets",
			in:   "[v6]\n[2001:db8::1]:2201\nfe80::1\n",
			want: `host 2001:db8::1 [v6] {"ansible_port":2201}
host fe80::1 [v6] {}
group all hosts=[] children=[ungrouped,v6]
group ungrouped hosts=[] children=[]
group v6 hosts=[2001:db8::1,fe80::1] children=[]
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := ParseINI("t.ini", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(inv); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestINIValues(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"42", 42}, {"-7", -7}, {"+3", 3}, {"0", 0}, {"00", 0}, {"1_000", 1000},
		{"0x1F", 31}, {"0o17", 15}, {"0b101", 5},
		{"010", "010"}, {"1__0", "1__0"}, {"1_", "1_"},
		{"1.5", 1.5}, {"1e3", 1000.0}, {".5", 0.5}, {"5.", 5.0}, {"010.5", 10.5}, {"-2.5e-1", -0.25},
		{"True", true}, {"False", false}, {"None", nil},
		{"true", "true"}, {"yes", "yes"}, {"hello", "hello"}, {"", ""},
		{"'x'", "x"}, {`"x y"`, "x y"}, {`'a' "b"`, "ab"}, {`'tab\there'`, "tab\there"}, {`r'a\tb'`, `a\tb`},
		{`'\u00e9'`, "é"}, {`b'bytes'`, "bytes"}, {`f'x'`, "f'x'"}, {`'unterminated`, "'unterminated"},
		{"[1, 'two', 3.0]", []any{1, "two", 3.0}}, {"[]", []any{}}, {"[1,]", []any{1}},
		{"(1, 2)", []any{1, 2}}, {"()", []any{}}, {"(1)", 1}, {"1, 2", []any{1, 2}}, {"1,", []any{1}},
		{"{'a': 1, 'b': [True, None]}", map[string]any{"a": 1, "b": []any{true, nil}}},
		{"{1: 'x', True: 'y', None: 'z'}", map[string]any{"1": "y", "null": "z"}},
		{"{False: 'x', 0.0: 'y'}", map[string]any{"false": "y"}},
		{"{}", map[string]any{}}, {"{1, 2}", "{1, 2}"}, {"{a: 1}", "{a: 1}"},
		{"12 # comment", 12}, {"  7", 7}, {"-(3)", -3}, {"--3", "--3"}, {"1+2j", "1+2j"}, {"2j", "2j"},
		{"123456789012345678901234567890", json.Number("123456789012345678901234567890")},
		{"x#y", "x#y"}, {"a=b", "a=b"}, {"[b'x']", "[b'x']"},
	}
	for _, tt := range tests {
		if got := iniValue(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("iniValue(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestParseYAML(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "all, children, hosts, vars, null hosts, string hosts",
			in: `all:
  vars: {v: all}
  hosts:
    a:
  children:
    web:
      hosts:
        w[1:2]:
          v: host
      vars:
        port: 80
    prod:
      children:
        web:
        db:
          hosts: d1
      vars:
        v: prod
`,
			want: `host a [ungrouped] {"v":"all"}
host w1 [prod,web] {"port":80,"v":"host"}
host w2 [prod,web] {"port":80,"v":"host"}
host d1 [db,prod] {"v":"prod"}
group all hosts=[a] children=[ungrouped,web,prod]
group ungrouped hosts=[a] children=[]
group web hosts=[w1,w2] children=[]
group prod hosts=[] children=[web,db]
group db hosts=[d1] children=[]
`,
		},
		{
			name: "YAML 1.1 scalars, quoting, anchors and merge keys",
			in: `g:
  hosts:
    h:
      b: yes
      o: off
      oct: 010
      sexa: "1:30"
      sexa_plain: 1:30
      f: 1.0e+3
      f_nosign: 1e3
      q: 'yes'
      n: ~
      base: &b {x: 1, y: 2}
      merged:
        <<: *b
        y: 3
      lst: [a, 1, no]
      tag: !!str 12
`,
			want: `host h [g] {"b":true,"base":{"x":1,"y":2},"f":1000,"f_nosign":"1e3","lst":["a",1,false],"merged":{"x":1,"y":3},"n":null,"o":false,"oct":8,"q":"yes","sexa":"1:30","sexa_plain":90,"tag":"12"}
group all hosts=[] children=[ungrouped,g]
group ungrouped hosts=[] children=[]
group g hosts=[h] children=[]
`,
		},
		{
			name: "a group in several places merges; unknown keys and non-mapping groups are skipped",
			in: `a:
  hosts: {h1: }
  children:
    shared:
      hosts: {s1: }
b:
  children:
    shared:
      vars: {from: b}
  whatever: 1
c: not a group
`,
			want: `host h1 [a] {}
host s1 [a,b,shared] {"from":"b"}
group all hosts=[] children=[ungrouped,a,b]
group ungrouped hosts=[] children=[]
group a hosts=[h1] children=[shared]
group shared hosts=[s1] children=[]
group b hosts=[] children=[shared]
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := ParseYAML("t.yml", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(inv); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestLoadFormat checks how Load picks the format: by extension, else
// YAML when the file is a YAML mapping, else INI.
func TestLoadFormat(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ file, content, host string }{
		{"a.yml", "g:\n  hosts:\n    y1:\n", "y1"},
		{"a.json", `{"g": {"hosts": {"j1": null}}}`, "j1"},
		{"a.ini", "i1\n", "i1"},
		{"hosts", "g:\n  hosts:\n    y2:\n", "y2"},
		{"hosts2", "[g]\ni2 x=1\n", "i2"},
		{"hosts3", "i3:2222\n", "i3"},
		{"ini.yml", "[g]\ni4\n", "i4"}, // Ansible's ini plugin reads what its yaml plugin cannot
	} {
		path := filepath.Join(dir, tt.file)
		if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
			t.Fatal(err)
		}
		inv, err := Load(path)
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		if inv.Host(tt.host) == nil {
			t.Errorf("%s: no host %s in\n%s", tt.file, tt.host, dump(inv))
		}
	}
}

// laughs is a "billion laughs" YAML: ten aliases deep, each repeating the
// previous ten times.
var laughs = func() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	b.WriteString("web:\n  vars:\n    boom: *a9\n  hosts:\n    h1:\n")
	return b.String()
}()

// TestBadInventories checks that every kind of bad inventory is an *Error
// naming the file and the line.
func TestBadInventories(t *testing.T) {
	tests := []struct {
		file, in string
		line     int
		msg      string
	}{
		{"a.ini", "h\n[web\nw1\n", 2, "unclosed section header: [web"},
		{"a.ini", "[web:hostz]\n", 1, "section [web:hostz] has unknown type: hostz"},
		{"a.ini", "[web]]\n", 1, "invalid section entry"},
		{"a.ini", "[web]\nw1\n[prod:children]\nweb\ndb\n", 5, "section [prod:children] includes a group that is never declared: db"},
		{"a.ini", "[wbe:vars]\nx=1\n[web]\n", 1, "section [wbe:vars] is for a group that is never declared: wbe"},
		{"a.ini", "[g:vars]\nnovalue\n[g]\n", 2, "expected key=value, got: novalue"},
		{"a.ini", "[g:children]\nbad:name\n", 2, "expected group name, got: bad:name"},
		{"a.ini", "h x=1 y\n", 1, "expected key=value host variable assignment, got: y"},
		{"a.ini", "h x='unclosed\n", 1, "no closing quotation"},
		{"a.ini", "web[1:]\n", 1, "must specify an end value"},
		{"a.ini", "web[01:100]\n", 1, "same width"},
		{"a.ini", "web[c:a]\n", 1, "begin <= end"},
		{"a.ini", "web[1:3:0]\n", 1, "step must not be zero"},
		{"a.ini", "web[1:2:3:4]\n", 1, "begin:end or begin:end:step"},
		{"a.ini", "web[x:10]\n", 1, "must be numeric"},
		{"a.ini", "web[1:3\n", 1, "no closing ]"},
		{"a.ini", "web[1:99999999]\n", 1, "more than"},
		{"a.ini", "web:\n", 1, "ending in ':' is not allowed"},
		{"a.ini", "---\n", 1, "sign this is a YAML file"},
		{"a.ini", "[a:children]\nb\n[b:children]\na\n", 4, "recursive dependency loop"},
		{"a.ini", "[a:children]\na\n", 2, "child of itself"},
		{"a.yml", "web:\n  hosts:\n    w1:\n    w1:\n", 4, `duplicate key "w1" (first at line 3)`},
		{"a.yml", "web:\n  hosts: {}\nweb:\n", 3, `duplicate key "web" (first at line 1)`},
		{"a.yml", "web:\n  hosts:\n    - w1\n", 3, `invalid "hosts" entry for group "web": it needs a mapping, found a list`},
		{"a.yml", "web:\n  hosts:\n    123:\n", 3, "must be a string"},
		{"a.yml", "web:\n  hosts:\n    w1: [a]\n", 3, "must be a mapping"},
		{"a.yml", "web:\n  hosts:\n    w1:\n\tw2:\n", 4, "YAML: found character that cannot start any token"},
		{"a.yml", "web:\n  children:\n    - db\n", 3, "it needs a mapping"},
		{"a.yml", "a:\n  children:\n    b:\n      children:\n        a:\n", 3, `adding group "b" as child to "a" creates a recursive dependency loop`},
		{"a.yml", "plugin: aws_ec2\n", 1, "inventory plugin configuration"},
		{"a.yml", "- a\n- b\n", 1, "invalid structure"},
		{"a.yml", "web:\n  hosts:\n    web[1:]:\n", 3, "must specify an end value"},
		{"a.yml", laughs, 1, "too many YAML nodes"},
		{"a.ini", strings.Repeat("web[1:99999]\n", 2), 2, "more than 100000 hosts"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.file, []byte(tt.in))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s %q: err = %v, want an *Error", tt.file, tt.in, err)
			continue
		}
		if e.File != tt.file || e.Line != tt.line || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%s %q: error %q, want %s:%d: …%s…", tt.file, tt.in, err, tt.file, tt.line, tt.msg)
		}
		if tt.line > 0 && !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: ", tt.file, tt.line)) {
			t.Errorf("%s %q: error %q does not start with file:line", tt.file, tt.in, err)
		}
	}
}

// TestEmpty: an empty file is an empty inventory, as in Ansible (whose
// ini plugin accepts what its yaml plugin calls empty); ParseYAML alone
// refuses it.
func TestEmpty(t *testing.T) {
	for _, f := range []string{"a.yml", "a.ini", "hosts"} {
		inv, err := Parse(f, []byte("\n# nothing\n"))
		if err != nil || len(inv.Hosts()) != 0 {
			t.Errorf("Parse(%s, empty) = %v, %v; want no hosts", f, inv, err)
		}
	}
	if _, err := ParseYAML("a.yml", nil); err == nil || !strings.Contains(err.Error(), "empty YAML inventory") {
		t.Errorf("ParseYAML(empty) err = %v", err)
	}
}

// TestParseTestdata parses every testdata inventory and checks a few
// facts about each, so the files stay valid without Ansible at hand.
func TestParseTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/compare/*")
	if len(files) < 8 {
		t.Fatalf("want at least 8 inventories, got %d", len(files))
	}
	for _, f := range files {
		inv, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(inv.Hosts()) == 0 {
			t.Errorf("%s: no hosts", f)
		}
	}
	inv, err := Load("testdata/compare/big.ini")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(inv.Hosts()); n != 150+40+26 {
		t.Errorf("big.ini: %d hosts, want 216", n)
	}
	h := inv.Host("web042.example.com")
	if h == nil {
		t.Fatal("big.ini: no web042.example.com")
	}
	if got := inv.GroupNames(h); !reflect.DeepEqual(got, []string{"eu", "web", "web_eu"}) {
		t.Errorf("web042 groups = %v", got)
	}
	if v := inv.HostVars(h); v["region"] != "eu" || v["role"] != "web" {
		t.Errorf("web042 vars = %v", v)
	}
	names := []string{}
	for _, g := range inv.Groups() {
		names = append(names, g.Name)
	}
	if !sort.StringsAreSorted(names[2:3]) || names[0] != "all" || names[1] != "ungrouped" {
		t.Errorf("groups = %v, want all and ungrouped first", names)
	}
}

// TestVarsDirs checks group_vars/ and host_vars/ beside the inventory:
// which files count, and where they stand in the precedence.
func TestVarsDirs(t *testing.T) {
	inv, err := Load("testdata/vardirs/hosts.ini")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"web1": `{"ansible_host":"192.0.2.1","ansible_user":"ops","from_inventory":"overridden_by_file","http_port":8080,"level":"host_file","list":[1,"two"],"only_all_file":true}`,
		"web2": `{"ansible_user":"ops","from_inventory":"overridden_by_file","http_port":8080,"inline":"host_file_wins","level":"web_file","list":[1,"two"],"only_all_file":true}`,
		"db1":  `{"ansible_port":2201,"ansible_user":"ops","from_inventory":"overridden_by_file","level":"host_json","nested":true,"noext":1,"only_all_file":true,"port":5433}`,
		"db2":  `{"ansible_user":"ops","from_inventory":"overridden_by_file","level":"db_dir_01","nested":true,"noext":1,"only_all_file":true,"port":5433}`,
	}
	for name, w := range want {
		b, _ := json.Marshal(inv.HostVars(inv.Host(name)))
		if string(b) != w {
			t.Errorf("%s vars:\n got %s\nwant %s", name, b, w)
		}
	}
	// Parse alone reads no directories.
	data, _ := os.ReadFile("testdata/vardirs/hosts.ini")
	inv, err = Parse("testdata/vardirs/hosts.ini", data)
	if err != nil {
		t.Fatal(err)
	}
	if v := inv.HostVars(inv.Host("web1")); v["level"] != "prod_inventory" {
		t.Errorf("Parse: web1 level = %v, want prod_inventory", v["level"])
	}

	// A bad vars file is an error naming it.
	dir := t.TempDir()
	for _, tt := range []struct{ file, content, want string }{
		{"group_vars/web.yml", "- a\n- b\n", "group_vars/web.yml:1: a vars file must hold a mapping"},
		{"host_vars/w1", "a: 1\na: 2\n", "host_vars/w1:2: duplicate key"},
		{"group_vars/all/x.yaml", "a: [\n", "group_vars/all/x.yaml:1: YAML: "},
	} {
		sub := filepath.Join(dir, strings.ReplaceAll(tt.file, "/", "_"))
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sub, tt.file)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "hosts.ini"), []byte("[web]\nw1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, tt.file), []byte(tt.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(filepath.Join(sub, "hosts.ini"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want …%s…", tt.file, err, tt.want)
		}
	}
}

// TestLongChildrenChain parses a chain of 120,000 [gN:children] sections
// (and a YAML chain): looking for a loop on every link made this
// quadratic (20,000 links took 25 s; 120,000 would take 15 minutes,
// past go test's timeout). A loop closed at the end of a long chain names
// the line that closes it.
func TestLongChildrenChain(t *testing.T) {
	const n = 120_000
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[g%d:children]\ng%d\n", i, i+1)
	}
	fmt.Fprintf(&b, "[g%d]\nh1\n", n)
	inv, err := Parse("chain.ini", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(inv.GroupNames(inv.Host("h1"))); got != n+1 {
		t.Errorf("h1 is in %d groups, want %d", got, n+1)
	}

	b.Reset()
	for i := 0; i < n*3/4; i++ { // within the YAML node bound
		fmt.Fprintf(&b, "g%d:\n  children:\n    g%d:\n", i, i+1)
	}
	if _, err := Parse("chain.yml", []byte(b.String())); err != nil {
		t.Fatal(err)
	}

	b.Reset()
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[g%d:children]\ng%d\n", i, i+1)
	}
	fmt.Fprintf(&b, "[g%d:children]\ng0\n", n)
	_, err = Parse("loop.ini", []byte(b.String()))
	want := fmt.Sprintf(`loop.ini:%d: adding group "g0" as child to "g%d" creates a recursive dependency loop`, 2*n+2, n)
	if err == nil || err.Error() != want {
		t.Errorf("loop at the end of a chain: err = %v, want %s", err, want)
	}
}

// heapAfter returns the live heap after parsing data as file (and the
// parse's error), the inventory kept alive while measuring.
func heapAfter(t *testing.T, file, data string) (uint64, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	inv, err := Parse(file, []byte(data))
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(inv)
	if after.HeapAlloc < before.HeapAlloc {
		return 0, err
	}
	return after.HeapAlloc - before.HeapAlloc, err
}

// TestRangeVarsShared checks that the hosts of one range share their
// variables: 100,000 hosts with 10 variables each used to hold a map
// per host (a 2.7 KB file took 3.6 GB); and that a host given a value of
// its own later does not change its neighbours'.
func TestRangeVarsShared(t *testing.T) {
	vars := make([]string, 10)
	yvars := make([]string, 10)
	for i := range vars {
		vars[i] = fmt.Sprintf("v%d=%d", i, i)
		yvars[i] = fmt.Sprintf("v%d: %d", i, i)
	}
	ini := "[g]\nh-[0:99999] " + strings.Join(vars, " ") + "\n"
	yml := "g:\n  hosts:\n    h-[0:99999]: {" + strings.Join(yvars, ", ") + "}\n"
	const bound = 64 << 20
	for _, tt := range []struct{ file, data string }{{"big.ini", ini}, {"big.yml", yml}} {
		used, err := heapAfter(t, tt.file, tt.data)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		t.Logf("%s: %d MiB live after parsing", tt.file, used>>20)
		if used > bound {
			t.Errorf("%s: %d MiB live after parsing 100,000 hosts with 10 variables, want under %d MiB", tt.file, used>>20, bound>>20)
		}
	}

	inv, err := Parse("a.ini", []byte("[g]\nh[1:3] a=1 b=2\n[x]\nh2 a=9\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"h1": 1, "h2": 9, "h3": 1} {
		if got := inv.HostVars(inv.Host(name))["a"]; got != want {
			t.Errorf("%s: a = %v, want %d", name, got, want)
		}
	}
	if o, _ := inv.VarOrigin(inv.Host("h2"), "a"); o.Line != 4 {
		t.Errorf("h2's a set at %v, want a.ini:4", o)
	}
	if o, _ := inv.VarOrigin(inv.Host("h3"), "a"); o.Line != 2 {
		t.Errorf("h3's a set at %v, want a.ini:2", o)
	}
}

// TestTooManyHostVars: a short file whose ranges would set millions of
// variables is refused on the line that goes over the bound.
func TestTooManyHostVars(t *testing.T) {
	vars := make([]string, 40)
	yvars := make([]string, 40)
	for i := range vars {
		vars[i] = fmt.Sprintf("v%d=%d", i, i)
		yvars[i] = fmt.Sprintf("v%d: %d", i, i)
	}
	var ini, yml strings.Builder
	ini.WriteString("[g]\n")
	yml.WriteString("g:\n  hosts:\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&ini, "h%d-[0:99999] %s\n", i, strings.Join(vars, " "))
		fmt.Fprintf(&yml, "    h%d-[0:99999]: {%s}\n", i, strings.Join(yvars, ", "))
	}
	for _, tt := range []struct{ file, data, want string }{
		{"big2.ini", ini.String(), "big2.ini:2: the inventory sets more than 1000000 host variables"},
		{"big2.yml", yml.String(), "big2.yml:3: the inventory sets more than 1000000 host variables"},
	} {
		used, err := heapAfter(t, tt.file, tt.data)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %s…", tt.file, err, tt.want)
		}
		if used > 64<<20 {
			t.Errorf("%s: %d MiB live after refusing it", tt.file, used>>20)
		}
	}
	// Without variables the host bound applies: the second range is over.
	_, err := Parse("many.ini", []byte("h[0:99999]\nk[0:99999]\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "many.ini:2: ") || !strings.Contains(err.Error(), "more than 100000 hosts") {
		t.Errorf("200,000 hosts: err = %v, want many.ini:2: … more than 100000 hosts", err)
	}
}
