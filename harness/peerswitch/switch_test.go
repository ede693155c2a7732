package peerswitch

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/oplogha/oplogha/harness/ports"
)

// three starts a cluster of three embedded members whose peer URLs are
// the switch's listeners; it returns a client per member, each talking to
// that member alone.
func three(t *testing.T, s *Switch) []*clientv3.Client {
	t.Helper()
	p, err := ports.Free(9)
	require.NoError(t, err)
	names := []string{"etcd-0", "etcd-1", "etcd-2"}
	var initial string
	adv := make([]string, 3)
	for i, n := range names {
		adv[i], err = s.Add(n, ports.Addr(p[i]), ports.Addr(p[3+i]))
		require.NoError(t, err)
		if i > 0 {
			initial += ","
		}
		initial += fmt.Sprintf("%s=http://%s", n, adv[i])
	}
	t.Cleanup(func() { _ = s.Close() })
	started := make(chan *embed.Etcd, 3)
	for i, n := range names {
		cfg := embed.NewConfig()
		cfg.Name, cfg.Dir, cfg.UnsafeNoFsync = n, t.TempDir(), true
		cfg.Logger, cfg.LogLevel = "zap", "error"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cu, _ := url.Parse("http://" + ports.Addr(p[6+i]))
		lpu, _ := url.Parse("http://" + ports.Addr(p[3+i]))
		apu, _ := url.Parse("http://" + adv[i])
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*lpu}, []url.URL{*apu}
		cfg.InitialCluster, cfg.InitialClusterToken = initial, fmt.Sprintf("switch-%d", p[0])
		cfg.TickMs, cfg.ElectionMs = 50, 500
		go func() {
			e, err := embed.StartEtcd(cfg)
			if err != nil {
				t.Error(err)
				started <- nil
				return
			}
			started <- e
		}()
	}
	for range names {
		e := <-started
		require.NotNil(t, e)
		t.Cleanup(e.Close)
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatal("embedded member not ready after 30s")
		}
	}
	var clis []*clientv3.Client
	for i := range names {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + ports.Addr(p[6+i])}, DialTimeout: 2 * time.Second,
			Logger: zap.NewNop()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cli.Close() })
		clis = append(clis, cli)
	}
	return clis
}

// linearizable reports whether a linearizable read answered through cli
// within a second.
func linearizable(cli *clientv3.Client) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := cli.Get(ctx, "k")
	return err == nil
}

// serializable is the value of k as cli's member alone has it.
func serializable(t *testing.T, cli *clientv3.Client) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "k", clientv3.WithSerializable())
	require.NoError(t, err)
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

// A member cut off from both peers in both directions falls behind: it
// answers no linearizable read and its own copy keeps the old value while
// the other two, a quorum, accept a write; restored, it catches up. The
// other two members' links to each other are never touched.
func TestIsolatingOneMemberLeavesItBehindTheQuorum(t *testing.T) {
	s := New()
	clis := three(t, s)
	_, err := clis[0].Put(context.Background(), "k", "old")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return serializable(t, clis[2]) == "old" }, 10*time.Second, 20*time.Millisecond)

	for _, other := range []string{"etcd-0", "etcd-1"} {
		require.NoError(t, s.Cut("etcd-2", other))
		require.NoError(t, s.Cut(other, "etcd-2"))
	}
	require.Equal(t, []string{"etcd-0→etcd-2", "etcd-1→etcd-2", "etcd-2→etcd-0", "etcd-2→etcd-1"}, s.Cuts())
	require.Eventually(t, func() bool { return !linearizable(clis[2]) }, 15*time.Second, 50*time.Millisecond,
		"the isolated member must stop answering linearizable reads")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err = clis[0].Put(ctx, "k", "new")
	cancel()
	require.NoError(t, err, "the two others are a quorum")
	require.True(t, linearizable(clis[1]))
	time.Sleep(500 * time.Millisecond) // nothing may arrive: a negative needs a span
	require.Equal(t, "old", serializable(t, clis[2]), "nothing reaches the isolated member")

	for _, other := range []string{"etcd-0", "etcd-1"} {
		require.NoError(t, s.Restore("etcd-2", other))
		require.NoError(t, s.Restore(other, "etcd-2"))
	}
	require.Empty(t, s.Cuts())
	require.Eventually(t, func() bool { return serializable(t, clis[2]) == "new" }, 15*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool { return linearizable(clis[2]) }, 15*time.Second, 50*time.Millisecond)
}

// One direction only: with etcd-2's messages to the others dropped and
// theirs to it flowing, etcd-2 still receives the quorum's entries (its
// copy follows the writes) but its answers never arrive, so its
// linearizable reads, which need the leader's answer, fail.
func TestOneDirectionCutStillDeliversTheOther(t *testing.T) {
	s := New()
	clis := three(t, s)
	require.Eventually(t, func() bool { return linearizable(clis[2]) }, 10*time.Second, 50*time.Millisecond)
	leader := func() string {
		for i, cli := range clis {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := cli.Status(ctx, cli.Endpoints()[0])
			cancel()
			if err == nil && st.Header.MemberId == st.Leader {
				return fmt.Sprintf("etcd-%d", i)
			}
		}
		return ""
	}
	require.Eventually(t, func() bool { return leader() != "" }, 10*time.Second, 50*time.Millisecond)
	// Cut a follower's messages to everyone: its heartbeat answers and read
	// index requests are dropped, while the leader's appends still arrive.
	follower := "etcd-2"
	if leader() == follower {
		follower = "etcd-1"
	}
	var fc *clientv3.Client
	for i, cli := range clis {
		if fmt.Sprintf("etcd-%d", i) == follower {
			fc = cli
		}
	}
	for _, m := range s.Members() {
		if m != follower {
			require.NoError(t, s.Cut(follower, m))
		}
	}
	require.Eventually(t, func() bool { return !linearizable(fc) }, 15*time.Second, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err := clis[0].Put(ctx, "k", "v1")
	if follower == "etcd-0" {
		_, err = clis[1].Put(ctx, "k", "v1")
	}
	cancel()
	require.NoError(t, err)
	require.Eventually(t, func() bool { return serializable(t, fc) == "v1" }, 15*time.Second, 50*time.Millisecond,
		"the leader's appends still reach the follower whose own messages are dropped")
}

func TestCutNamesOnlyMembersBehindTheSwitch(t *testing.T) {
	s := New()
	p, err := ports.Free(2)
	require.NoError(t, err)
	_, err = s.Add("etcd-0", ports.Addr(p[0]), ports.Addr(p[1]))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.ErrorIs(t, s.Cut("etcd-0", "etcd-9"), ErrUnknownMember)
	require.ErrorIs(t, s.Restore("etcd-7", "etcd-0"), ErrUnknownMember)
	require.Empty(t, s.Cuts())
}
