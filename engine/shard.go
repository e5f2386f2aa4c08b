package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxShards bounds N in --shard K/N.
const MaxShards = 100000

// Shard is --shard K/N: the K-th of N disjoint parts of a selection
// (1 ≤ K ≤ N), so that one inventory can be split across controllers (CI
// matrix jobs, a Kubernetes Indexed Job). The zero Shard selects every host.
type Shard struct{ K, N int }

// ParseShard reads "K/N". A malformed value is a ConfigError.
func ParseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	switch {
	case !ok || kerr != nil || nerr != nil:
		return Shard{}, configf("--shard %q: want K/N, e.g. 1/4 (the first of four parts)", s)
	case n < 1 || n > MaxShards:
		return Shard{}, configf("--shard %q: N must be between 1 and %d", s, MaxShards)
	case k < 1 || k > n:
		return Shard{}, configf("--shard %q: K must be between 1 and N (%d); parts are numbered from 1", s, n)
	}
	return Shard{K: k, N: n}, nil
}

// String is "K/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Select returns the hosts of the shard, in their order in hosts: the
// hosts are ranked by name, and the host of rank i (from 0) belongs to
// shard i mod N + 1. Every controller given the same selection computes
// the same parts whatever the order of the inventory, the parts are
// disjoint and together are the selection, and their sizes differ by one
// at most.
func (s Shard) Select(hosts []Target) []Target {
	if s.N <= 1 {
		return hosts
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	slices.Sort(names)
	mine := make(map[string]bool, len(names)/s.N+1)
	for i := s.K - 1; i < len(names); i += s.N {
		mine[names[i]] = true
	}
	out := make([]Target, 0, len(mine))
	for _, h := range hosts {
		if mine[h.Name] {
			out = append(out, h)
		}
	}
	return out
}
