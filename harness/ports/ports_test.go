package ports

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFreePortsAreDistinctBindableAndBelowTheEphemeralRange(t *testing.T) {
	lo, hi := drawRange()
	ps, err := Free(50)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, p := range ps {
		require.False(t, seen[p], "port %d twice", p)
		seen[p] = true
		if hi > lo {
			require.True(t, p >= lo && p < hi, "port %d outside [%d, %d)", p, lo, hi)
		}
		l, err := net.Listen("tcp", Addr(p))
		require.NoError(t, err, "port %d was handed out but cannot be bound", p)
		l.Close()
	}
}
