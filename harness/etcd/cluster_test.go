package etcd

import (
	"context"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/proc"
)

func etcdBinary(t *testing.T) string {
	t.Helper()
	c, err := bin.NewCache(".", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b, err := c.Path(ctx, "etcd")
	require.NoError(t, err)
	return b.Path
}

func TestThreeMemberClusterSurvivesMemberLossAndCleansUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	group := proc.NewGroup()
	closed := false
	defer func() {
		if !closed {
			group.Close(time.Second)
		}
	}()
	c, err := Start(ctx, group, Options{Members: 3, Binary: etcdBinary(t), Dir: t.TempDir()})
	require.NoError(t, err)
	t.Logf("boot %v", c.Boot)

	cli, err := c.Client(nil)
	require.NoError(t, err)
	defer cli.Close()
	_, err = cli.Put(ctx, "/k", "v1")
	require.NoError(t, err)

	victim := c.Members[1]
	p, ok := c.Process(victim)
	require.True(t, ok)
	require.NoError(t, p.Kill())
	require.NoError(t, c.WaitHealthy(ctx, 30*time.Second), "two of three members keep quorum")
	_, err = cli.Put(ctx, "/k", "v2")
	require.NoError(t, err)

	require.NoError(t, c.StartMember(victim))
	require.NoError(t, c.WaitHealthy(ctx, 30*time.Second))
	// The restarted member caught up: a serializable read on it alone sees v2.
	one, err := c.Client([]string{victim.ClientURL})
	require.NoError(t, err)
	defer one.Close()
	require.Eventually(t, func() bool {
		r, err := one.Get(ctx, "/k")
		return err == nil && len(r.Kvs) == 1 && string(r.Kvs[0].Value) == "v2"
	}, 10*time.Second, 50*time.Millisecond)

	records := group.Records()
	require.Len(t, records, 4, "three starts and one restart")
	require.NoError(t, group.Close(5*time.Second))
	closed = true
	for _, r := range records {
		require.Error(t, syscall.Kill(r.PID, 0), "pid %d (%s) left running", r.PID, r.Name)
	}
	for _, m := range c.Members {
		for _, port := range []int{m.ClientPort, m.PeerPort} {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
			require.NoError(t, err, "port %d still bound", port)
			l.Close()
		}
	}
}
