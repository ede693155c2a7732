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

// Ports a run drew but has not bound yet, or whose node is down, are free to
// the kernel; a second run in the same process must still not draw them.
func TestFreeNeverRepeatsAPortInOneProcess(t *testing.T) {
	lo, hi := drawRange()
	if hi-lo < 20000 {
		t.Skipf("the range below the ephemeral ports is %d wide; the test draws 10000", hi-lo)
	}
	seen := map[int]bool{}
	for range 200 {
		ps, err := Free(50) // closed again on return: free to the kernel
		require.NoError(t, err)
		for _, p := range ps {
			require.False(t, seen[p], "port %d handed out twice", p)
			seen[p] = true
		}
	}
}

func TestPortLogForgetsTheOldestBeyondItsLimit(t *testing.T) {
	l := &portLog{set: map[int]bool{}}
	for p := 1; p <= 5; p++ {
		l.add(p, 3)
	}
	require.Equal(t, []int{3, 4, 5}, l.order)
	require.False(t, l.has(1))
	require.False(t, l.has(2))
	require.True(t, l.has(3) && l.has(5))
}
