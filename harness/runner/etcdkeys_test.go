package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/scenario"
)

// TestEtcdKeysArePutAsTheHarnessWrites: cluster.etcd_keys puts each key —
// a name under the cluster's root, or a raw key from / — and records each
// put's revision as the harness's own write (an audit never judges it).
func TestEtcdKeysArePutAsTheHarnessWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := cache(t).Path(ctx, "etcd")
	require.NoError(t, err)
	group := proc.NewGroup()
	defer group.Close(time.Second)
	ec, err := etcd.Start(ctx, group, etcd.Options{Members: 1, Binary: c.Path, Dir: t.TempDir()})
	require.NoError(t, err)

	r := &run{sc: &scenario.Scenario{Cluster: scenario.Cluster{ClusterID: "chaos", EtcdKeys: map[string]string{
		"snapshot/latest": "a pointer", "/elsewhere/key": "raw"}}}}
	require.NoError(t, r.putEtcdKeys(ctx, ec))

	cli, err := ec.Client(nil)
	require.NoError(t, err)
	defer cli.Close()
	for key, want := range map[string]string{"/oplog/chaos/snapshot/latest": "a pointer", "/elsewhere/key": "raw"} {
		resp, err := cli.Get(ctx, key)
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1, key)
		require.Equal(t, want, string(resp.Kvs[0].Value))
		found := false
		for _, e := range r.events.events {
			if e.Name == "etcd-key" && e.Target == key {
				require.Equal(t, []int64{resp.Kvs[0].ModRevision}, e.Revisions, "the put's revision is the harness's")
				found = true
			}
		}
		require.True(t, found, "an event records the put of %s", key)
	}
}
