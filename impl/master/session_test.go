package master

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/oplogha/oplogha/impl/internal/etcdtest"
)

// A standby waiting in the election's queue whose session ends (its lease
// gone at etcd) ends its term with errSessionEnded, not a bare "context
// canceled", and logs whether etcd still held the lease: a handover that
// passed it by can be told from one that was slow.
func TestAStandbyWhoseSessionEndsSaysSo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := etcdtest.Start(t)
	cfg := DefaultConfig()
	cfg.ClusterID, cfg.Listen, cfg.EtcdEndpoints = "session-ends", "127.0.0.1:0", []string{srv.Endpoint}
	cfg.Environment, cfg.OplogPollIntervalMS, cfg.LeaderLeaseSeconds = "development", 20, 2
	logs := &lockedBuffer{}
	m, err := New(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	require.NoError(t, err)
	m.cli = srv.Client

	// another node leads, so this one waits in the queue
	leader, err := concurrency.NewSession(srv.Client, concurrency.WithTTL(5))
	require.NoError(t, err)
	defer leader.Close()
	require.NoError(t, concurrency.NewElection(leader, m.ks.Leader()).Campaign(ctx, "elsewhere"))

	ended := make(chan error, 1)
	go func() {
		_, err := m.standbyTerm(ctx)
		ended <- err
	}()
	var ours clientv3.LeaseID
	require.Eventually(t, func() bool {
		resp, err := srv.Client.Get(ctx, m.ks.Leader(), clientv3.WithPrefix())
		if err != nil {
			return false
		}
		for _, kv := range resp.Kvs {
			if clientv3.LeaseID(kv.Lease) != leader.Lease() {
				ours = clientv3.LeaseID(kv.Lease)
			}
		}
		return ours != 0
	}, 10*time.Second, 20*time.Millisecond, "the standby never campaigned")
	_, err = srv.Client.Revoke(ctx, ours)
	require.NoError(t, err)

	select {
	case err := <-ended:
		require.ErrorIs(t, err, errSessionEnded)
	case <-ctx.Done():
		t.Fatal("the standby term did not end with its session")
	}
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `"msg":"election session ended"`) &&
			strings.Contains(logs.String(), `"etcd_lease":"gone (expired or revoked)"`)
	}, 5*time.Second, 20*time.Millisecond, logs.String())
}
