package keyspace

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBatchKeysSortNumerically(t *testing.T) {
	ks := Must("c1")
	ids := []uint64{1, 9, 10, 99, 100, 1 << 40, math.MaxUint64}
	for i := 1; i < len(ids); i++ {
		require.Less(t, ks.Batch(ids[i-1]), ks.Batch(ids[i]))
	}
	require.Equal(t, "/oplog/c1/batches/00000000000000000042", ks.Batch(42))
	id, ok := ks.ParseBatch(ks.Batch(math.MaxUint64))
	require.True(t, ok)
	require.Equal(t, uint64(math.MaxUint64), id)
	for _, bad := range []string{"/oplog/c1/batches/42", "/oplog/c2/batches/00000000000000000042", "/oplog/c1/batches/0000000000000000004x"} {
		_, ok := ks.ParseBatch(bad)
		require.False(t, ok, bad)
	}
}

func TestClusterIDRejectsNesting(t *testing.T) {
	for _, bad := range []string{"", "a/b", "-x", "a b", string(make([]byte, 129))} {
		_, err := New(bad)
		require.Error(t, err, "%q", bad)
	}
	_, err := New("prod-1.eu_west")
	require.NoError(t, err)
}
