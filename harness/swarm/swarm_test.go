package swarm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The same (seed, run) draws the same scenario, byte for byte; other runs
// draw others; over many runs every move of the menu is drawn.
func TestDrawIsDeterministicAndCoversTheMenu(t *testing.T) {
	a, err := Draw(42, 7)
	require.NoError(t, err)
	b, err := Draw(42, 7)
	require.NoError(t, err)
	ya, _ := a.Marshal()
	yb, _ := b.Marshal()
	require.Equal(t, string(ya), string(yb))
	c, err := Draw(42, 8)
	require.NoError(t, err)
	yc, _ := c.Marshal()
	require.NotEqual(t, string(ya), string(yc))

	seen := map[string]int{}
	shapes := map[[2]int]bool{}
	for i := 0; i < 300; i++ {
		sc, err := Draw(1, i)
		require.NoError(t, err, "run %d", i)
		require.Equal(t, "swarm", sc.Tier)
		require.NotEmpty(t, sc.Steps)
		shapes[[2]int{sc.Cluster.Etcd, sc.Cluster.Masters}] = true
		for _, m := range Moves() {
			if strings.Contains(sc.Description, m+" ") || strings.Contains(sc.Description, m+"]") {
				seen[m]++
			}
		}
	}
	for _, m := range Moves() {
		require.Positive(t, seen[m], "move %s never drawn in 300 runs", m)
	}
	require.Len(t, shapes, 4, "1 or 3 etcd members × 2 or 3 masters")
}
