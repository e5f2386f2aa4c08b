package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInventoryListShard: `agent inventory list --shard K/N` previews the
// parts: disjoint, together every selected host, each what `--shard K/N`
// selects; the global flag works too; a bad K/N is a usage error.
func TestInventoryListShard(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "hosts.ini")
	var b strings.Builder
	b.WriteString("[web]\n")
	for i := range 10 {
		b.WriteString("web" + string(rune('a'+i)) + " ansible_host=127.0.0.1\n")
	}
	b.WriteString("[db]\ndb1 ansible_host=127.0.0.1\n")
	os.WriteFile(inv, []byte(b.String()), 0o644)
	list := func(args ...string) []string {
		t.Helper()
		var out, errb strings.Builder
		if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errb.String())
		}
		var hosts []struct{ Name string }
		if err := json.Unmarshal([]byte(out.String()), &hosts); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out.String())
		}
		var names []string
		for _, h := range hosts {
			names = append(names, h.Name)
		}
		return names
	}
	all := list("inventory", "list", "-i", inv, "--limit", "web", "--json")
	var union []string
	for _, k := range []string{"1/3", "2/3", "3/3"} {
		part := list("inventory", "list", "-i", inv, "--limit", "web", "--shard", k, "--json")
		if len(part) == 0 || len(part) == len(all) {
			t.Errorf("part %s: %q of %q", k, part, all)
		}
		for _, h := range part {
			if slices.Contains(union, h) {
				t.Errorf("part %s: %s is in an earlier part too", k, h)
			}
		}
		union = append(union, part...)
		if global := list("--shard", k, "inventory", "list", "-i", inv, "--limit", "web", "--json"); !slices.Equal(global, part) {
			t.Errorf("--shard %s before the command: %q, after: %q", k, global, part)
		}
	}
	slices.Sort(union)
	if !slices.Equal(union, all) {
		t.Errorf("the parts together: %q, want %q", union, all)
	}
	var out, errb strings.Builder
	if code := Main([]string{"inventory", "list", "-i", inv, "--shard", "4/3"}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("--shard 4/3: exit %d, want %d: %s", code, exitUsage, errb.String())
	}
}
