package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"1/4", Shard{1, 4}, ""},
		{" 4/4 ", Shard{4, 4}, ""},
		{"1/1", Shard{1, 1}, ""},
		{"0/4", Shard{}, "numbered from 1"},
		{"5/4", Shard{}, "between 1 and N"},
		{"1/0", Shard{}, "N must be"},
		{"-1/3", Shard{}, "between 1 and N"},
		{"1/1000001", Shard{}, "N must be"},
		{"1", Shard{}, "want K/N"},
		{"a/b", Shard{}, "want K/N"},
		{"1/2/3", Shard{}, "want K/N"},
		{"", Shard{}, "want K/N"},
	} {
		got, err := ParseShard(tc.in)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			continue
		}
		var ce ConfigError
		if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ce) {
			t.Errorf("ParseShard(%q) error %v, want a ConfigError with %q", tc.in, err, tc.err)
		}
	}
}

// TestShardSelect: for any selection and N, the parts are disjoint, cover
// it, differ in size by one at most, keep the selection's order, and do
// not depend on the order the inventory lists the hosts in.
func TestShardSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, total := range []int{0, 1, 2, 7, 100, 2000} {
		hosts := make([]Target, total)
		for i := range hosts {
			hosts[i] = Target{Name: fmt.Sprintf("h%05d.example", r.IntN(1_000_000))}
		}
		hosts = dedupe(hosts)
		shuffled := append([]Target(nil), hosts...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for _, n := range []int{1, 2, 3, 7, 16} {
			seen := map[string]int{}
			lo, hi := len(hosts), 0
			for k := 1; k <= n; k++ {
				part := Shard{k, n}.Select(hosts)
				other := Shard{k, n}.Select(shuffled)
				if names(part, true) != names(other, true) {
					t.Fatalf("%d hosts, shard %d/%d depends on the inventory's order", len(hosts), k, n)
				}
				if !inOrder(part, hosts) {
					t.Fatalf("shard %d/%d does not keep the selection's order", k, n)
				}
				for _, h := range part {
					seen[h.Name]++
				}
				lo, hi = min(lo, len(part)), max(hi, len(part))
			}
			if len(seen) != len(hosts) {
				t.Fatalf("%d hosts in %d parts: %d covered", len(hosts), n, len(seen))
			}
			for name, c := range seen {
				if c != 1 {
					t.Fatalf("%s in %d parts", name, c)
				}
			}
			if len(hosts) > 0 && hi-lo > 1 {
				t.Errorf("%d hosts in %d parts: sizes %d to %d", len(hosts), n, lo, hi)
			}
		}
	}
}

func dedupe(hs []Target) []Target {
	seen := map[string]bool{}
	var out []Target
	for _, h := range hs {
		if !seen[h.Name] {
			seen[h.Name] = true
			out = append(out, h)
		}
	}
	return out
}

func names(hs []Target, sorted bool) string {
	var s []string
	for _, h := range hs {
		s = append(s, h.Name)
	}
	if sorted {
		slices.Sort(s)
	}
	return strings.Join(s, ",")
}

func inOrder(part, all []Target) bool {
	i := 0
	for _, h := range all {
		if i < len(part) && part[i].Name == h.Name {
			i++
		}
	}
	return i == len(part)
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"1/4", "0/0", "9999999999999999999/1", "1/-1", " 2 / 3 ", "1/1/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.K < 1 || sh.K > sh.N || sh.N > MaxShards {
			t.Fatalf("ParseShard(%q) = %v", s, sh)
		}
		if again, err := ParseShard(sh.String()); err != nil || again != sh {
			t.Fatalf("%v does not read back: %v %v", sh, again, err)
		}
	})
}
