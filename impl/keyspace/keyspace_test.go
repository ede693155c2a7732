package keyspace

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
)

// TestClusterIDRuleIsUpstreams: New accepts exactly what
// contract.NormalizeClusterID accepts, and names the same keys.
func TestClusterIDRuleIsUpstreams(t *testing.T) {
	for _, id := range []string{"", "/", "a/b", "-x", "_", ".", "c1/", "a b", "é", string(make([]byte, 129)), "prod-1.eu_west"} {
		ks, err := New(id)
		norm, ok := contract.NormalizeClusterID(id)
		require.Equal(t, ok, err == nil, "%q: %v", id, err)
		if ok {
			require.Equal(t, contract.BuildDurablePrefixKey(norm), ks.DurablePrefix())
			require.Equal(t, contract.BuildBatchRecordKey(id, 42), ks.Batch(42))
		}
	}
}
