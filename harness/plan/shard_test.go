package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The shards of a plan partition it: every run in exactly one shard, in
// plan order within each, whatever the sizes.
func TestShardsPartitionThePlan(t *testing.T) {
	for n := 1; n <= 20; n++ {
		for size := 0; size <= 70; size++ {
			plan := make([]int, size)
			for i := range plan {
				plan[i] = i
			}
			seen := make([]int, size)
			for k := 1; k <= n; k++ {
				sh := Shard{K: k, N: n}
				got := Pick(sh, plan)
				for j := 1; j < len(got); j++ {
					require.Less(t, got[j-1], got[j], "shard %v keeps plan order", sh)
				}
				for _, v := range got {
					seen[v]++
				}
				require.InDelta(t, float64(size)/float64(n), float64(len(got)), 1, "shard %v of %d runs is balanced", sh, size)
			}
			for i, c := range seen {
				require.Equal(t, 1, c, "run %d of %d with %d shards", i, size, n)
			}
			var assigned int
			for _, a := range Assign(n, size) {
				assigned += len(a)
			}
			require.Equal(t, size, assigned)
		}
	}
}

func TestParseShard(t *testing.T) {
	s, err := ParseShard("3/16")
	require.NoError(t, err)
	require.Equal(t, Shard{K: 3, N: 16}, s)
	s, err = ParseShard("")
	require.NoError(t, err)
	require.True(t, s.All())
	for _, bad := range []string{"0/4", "5/4", "3", "a/b", "1/0", "-1/3", "2/"} {
		_, err := ParseShard(bad)
		require.ErrorIs(t, err, ErrBadShard, bad)
	}
}
