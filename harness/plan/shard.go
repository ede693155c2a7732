package plan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Shard is one slice of a plan: the K-th of N (1 ≤ K ≤ N). The zero Shard
// stands for "no sharding" and keeps every run.
type Shard struct{ K, N int }

// ErrBadShard is returned for a shard spec that is not K/N with 1 ≤ K ≤ N.
var ErrBadShard = errors.New("bad shard")

// ParseShard reads "K/N"; "" is the zero Shard.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	ks, ns, ok := strings.Cut(s, "/")
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	if !ok || errK != nil || errN != nil || n < 1 || k < 1 || k > n {
		return Shard{}, fmt.Errorf("%w %q: want K/N with 1 ≤ K ≤ N, e.g. 3/16", ErrBadShard, s)
	}
	return Shard{K: k, N: n}, nil
}

// All reports whether s keeps every run.
func (s Shard) All() bool { return s.N <= 1 }

func (s Shard) String() string {
	if s.All() {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Owns reports whether the run at position i of the plan belongs to s.
// Positions are dealt round-robin, so each shard gets a mix of the plan's
// scenarios rather than a contiguous (and possibly all-slow) block.
func (s Shard) Owns(i int) bool { return s.All() || i%s.N == s.K-1 }

// Pick returns the items of plan that s owns, in plan order.
func Pick[T any](s Shard, plan []T) []T {
	if s.All() {
		return plan
	}
	var out []T
	for i, v := range plan {
		if s.Owns(i) {
			out = append(out, v)
		}
	}
	return out
}

// Assign returns, for n shards, the positions of plan each one owns: the
// assignment `chaos plan --shards n` prints.
func Assign(n, size int) [][]int {
	if n < 1 {
		n = 1
	}
	out := make([][]int, n)
	for i := 0; i < size; i++ {
		out[i%n] = append(out[i%n], i)
	}
	return out
}
