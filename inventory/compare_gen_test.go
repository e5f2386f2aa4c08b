package inventory

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCompareAnsibleGenerated compares with Ansible on inventories made
// up from fixed seeds: random groups, children (acyclic), vars sections,
// host lines with ranges, ports and typed values, in INI and YAML, and
// random patterns over them. It finds the corners hand-written fixtures
// miss.
func TestCompareAnsibleGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs Ansible on generated inventories")
	}
	r := newAnsibleRunner(t)
	dir := t.TempDir()
	n := 6 // INVENTORY_GEN=N compares N inventories instead (a longer search)
	if v, err := strconv.Atoi(os.Getenv("INVENTORY_GEN")); err == nil && v > 0 {
		n = v
	}
	for i := 0; i < n; i++ {
		i := i
		yaml := i%3 == 2
		t.Run(fmt.Sprintf("seed%d", i), func(t *testing.T) {
			t.Parallel()
			g := newInvGen(uint64(i))
			var text, file string
			if yaml {
				text, file = g.yaml(), filepath.Join(dir, fmt.Sprintf("gen%d.yml", i))
			} else {
				text, file = g.ini(), filepath.Join(dir, fmt.Sprintf("gen%d.ini", i))
			}
			if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			r.compare(t, file, g.patterns(14), "0", "1", "2")
			if t.Failed() || testing.Verbose() {
				t.Logf("inventory %s:\n%s", file, text)
			}
		})
	}
}

// invGen makes up inventories. Groups only get children with a higher
// index, so there are no loops; every group is declared.
type invGen struct {
	rnd    *rand.Rand
	groups []string
	hosts  []string // host entries (names or ranges)
	names  []string // plain host names, for patterns
}

func newInvGen(seed uint64) *invGen {
	g := &invGen{rnd: rand.New(rand.NewPCG(seed, 42))}
	pool := []string{"web", "db", "app", "cache", "lb", "eu", "us", "prod", "stage"}
	g.rnd.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	g.groups = pool[:3+g.rnd.IntN(5)]
	g.names = []string{"h1", "h2", "h3", "h4", "h5", "x.example.com", "y.example.com", "10.0.0.1"}
	g.hosts = append([]string{}, g.names...)
	g.hosts = append(g.hosts, "n[1:3]", "r-[a:c]", "p[01:10:3]")
	g.names = append(g.names, "n1", "n3", "r-b", "p04")
	return g
}

func (g *invGen) pick(s []string) string { return s[g.rnd.IntN(len(s))] }

var (
	genKeys       = []string{"a", "b", "c", "ansible_user", "ansible_host"}
	genINIValues  = []string{"1", "-2", "0x10", "1.5", "True", "None", "yes", "'q'", "[1,2]", "{'k':1}", "010", "abc", "1,", `"x"`}
	genYAMLValues = []string{"1", "-2", "0x10", "1.5", "true", "yes", "~", "'q'", "[1, two]", "{k: 1}", "010", "abc", "1:30", `"x"`, "no"}
)

func (g *invGen) ini() string {
	var secs []string
	if g.rnd.IntN(2) == 0 {
		secs = append(secs, g.hostLines("", 1+g.rnd.IntN(2)))
	}
	for i, grp := range g.groups {
		secs = append(secs, g.hostLines("["+grp+"]\n", g.rnd.IntN(4)))
		if i+1 < len(g.groups) && g.rnd.IntN(2) == 0 {
			var b strings.Builder
			fmt.Fprintf(&b, "[%s:children]\n", grp)
			for _, c := range g.groups[i+1:] {
				if g.rnd.IntN(3) == 0 {
					fmt.Fprintln(&b, c)
				}
			}
			secs = append(secs, b.String())
		}
		if g.rnd.IntN(2) == 0 {
			secs = append(secs, g.varLines("["+grp+":vars]\n"))
		}
	}
	if g.rnd.IntN(2) == 0 {
		secs = append(secs, g.varLines("[all:vars]\n"))
	}
	// Sections in any order, but the ungrouped lines (if any) first.
	start := 0
	if len(secs) > 0 && !strings.HasPrefix(secs[0], "[") {
		start = 1
	}
	rest := secs[start:]
	g.rnd.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return strings.Join(secs, "")
}

func (g *invGen) hostLines(header string, n int) string {
	var b strings.Builder
	b.WriteString(header)
	for i := 0; i < n; i++ {
		h := g.pick(g.hosts)
		if g.rnd.IntN(5) == 0 && !strings.Contains(h, ":") && !strings.HasPrefix(h, "10.") {
			h += fmt.Sprintf(":%d", 2200+g.rnd.IntN(5))
		}
		b.WriteString(h)
		for j := g.rnd.IntN(3); j > 0; j-- {
			fmt.Fprintf(&b, " %s=%s", g.pick(genKeys), g.pick(genINIValues))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (g *invGen) varLines(header string) string {
	var b strings.Builder
	b.WriteString(header)
	for j := 1 + g.rnd.IntN(3); j > 0; j-- {
		fmt.Fprintf(&b, "%s = %s\n", g.pick(genKeys), g.pick(genINIValues))
	}
	if g.rnd.IntN(4) == 0 && header != "[all:vars]\n" {
		fmt.Fprintf(&b, "ansible_group_priority = %d\n", g.rnd.IntN(3))
	}
	return b.String()
}

// yaml writes the same kind of inventory in YAML: top-level groups, some
// of them repeated as children of others.
func (g *invGen) yaml() string {
	var b strings.Builder
	for i, grp := range g.groups {
		fmt.Fprintf(&b, "%s:\n", grp)
		g.yamlBody(&b, "  ", i, 2)
	}
	return b.String()
}

func (g *invGen) yamlBody(b *strings.Builder, ind string, i, depth int) {
	if n := g.rnd.IntN(4); n > 0 {
		fmt.Fprintf(b, "%shosts:\n", ind)
		seen := map[string]bool{}
		for ; n > 0; n-- {
			h := g.pick(g.hosts)
			if seen[h] {
				continue
			}
			seen[h] = true
			if g.rnd.IntN(2) == 0 {
				fmt.Fprintf(b, "%s  %s:\n", ind, h)
				continue
			}
			fmt.Fprintf(b, "%s  %s:\n", ind, h)
			g.yamlVars(b, ind+"    ")
		}
	}
	if g.rnd.IntN(2) == 0 {
		fmt.Fprintf(b, "%svars:\n", ind)
		g.yamlVars(b, ind+"  ")
	}
	if depth > 0 && i+1 < len(g.groups) && g.rnd.IntN(2) == 0 {
		fmt.Fprintf(b, "%schildren:\n", ind)
		seen := map[string]bool{}
		for j := i + 1; j < len(g.groups); j++ {
			if g.rnd.IntN(3) != 0 || seen[g.groups[j]] {
				continue
			}
			seen[g.groups[j]] = true
			fmt.Fprintf(b, "%s  %s:\n", ind, g.groups[j])
			if g.rnd.IntN(2) == 0 {
				g.yamlBody(b, ind+"    ", j, depth-1)
			}
		}
	}
}

func (g *invGen) yamlVars(b *strings.Builder, ind string) {
	seen := map[string]bool{}
	for j := 1 + g.rnd.IntN(3); j > 0; j-- {
		k := g.pick(genKeys)
		if seen[k] {
			continue
		}
		seen[k] = true
		fmt.Fprintf(b, "%s%s: %s\n", ind, k, g.pick(genYAMLValues))
	}
}

// patterns makes up n host patterns over the inventory's names.
func (g *invGen) patterns(n int) []string {
	atoms := func() string {
		switch g.rnd.IntN(8) {
		case 0:
			return g.pick(g.names)
		case 1:
			return g.pick(g.groups)[:2] + "*"
		case 2:
			return "~" + g.pick(g.names)[:1]
		case 3:
			return fmt.Sprintf("%s[%d]", g.pick(g.groups), g.rnd.IntN(3)-1)
		case 4:
			return fmt.Sprintf("%s[%d:%d]", g.pick(g.groups), g.rnd.IntN(2), g.rnd.IntN(4))
		case 5:
			return "*.example.com"
		}
		return g.pick(g.groups)
	}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var parts []string
		for k := 1 + g.rnd.IntN(3); k > 0; k-- {
			a := atoms()
			switch g.rnd.IntN(4) {
			case 0:
				a = "!" + a
			case 1:
				a = "&" + a
			}
			parts = append(parts, a)
		}
		sep := ":"
		if g.rnd.IntN(2) == 0 {
			sep = ","
		}
		p := strings.Join(parts, sep)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
