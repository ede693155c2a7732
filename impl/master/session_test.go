package master

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"google.golang.org/grpc"

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
	m, logs := standbyOn(t, "session-ends", srv.Endpoint, srv.Client)

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
	ours := clientv3.LeaseID(queuedBeside(ctx, t, srv.Client, m.ks.Leader(), leader.Lease()).Lease)
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

// A standby next in the election's queue whose client keep-alive gives its
// lease up while etcd still holds it (the renewals reach etcd, their
// answers are held back longer than the TTL) keeps its place: it resumes
// the same lease in a new session, says so, and wins when the leader
// resigns — on the old code its campaign ended with errSessionEnded and
// the node next to campaign won instead.
func TestAStandbyWhoseKeepAliveStallsKeepsItsPlace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := etcdtest.Start(t)
	stall := &keepAliveStall{}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint}, DialTimeout: 5 * time.Second,
		DialOptions: []grpc.DialOption{grpc.WithStreamInterceptor(stall.intercept)}})
	require.NoError(t, err)
	defer cli.Close()
	m, logs := standbyOn(t, "session-stalls", srv.Endpoint, cli)

	leader, err := concurrency.NewSession(srv.Client, concurrency.WithTTL(5))
	require.NoError(t, err)
	defer leader.Close()
	leaderElec := concurrency.NewElection(leader, m.ks.Leader())
	require.NoError(t, leaderElec.Campaign(ctx, "elsewhere"))

	type outcome struct {
		t   *term
		err error
	}
	ended := make(chan outcome, 1)
	go func() {
		tm, err := m.standbyTerm(ctx)
		ended <- outcome{tm, err}
	}()
	queued := queuedBeside(ctx, t, srv.Client, m.ks.Leader(), leader.Lease())

	stall.set(true)
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `"etcd_lease":"held"`)
	}, 10*time.Second, 20*time.Millisecond, "the client keep-alive never gave the lease up: %s", logs.String())
	stall.set(false)

	// Still queued under the same key, created at the same revision.
	resp, err := srv.Client.Get(ctx, string(queued.Key))
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1, "the standby's place in the queue is gone")
	require.Equal(t, queued.CreateRevision, resp.Kvs[0].CreateRevision)
	require.NoError(t, leaderElec.Resign(ctx))

	select {
	case o := <-ended:
		require.NoError(t, o.err, logs.String())
		require.Equal(t, string(queued.Key), o.t.elec.Key(), "won under the place it held")
		require.Equal(t, clientv3.LeaseID(queued.Lease), o.t.sess.Lease())
		select {
		case <-o.t.sess.Done():
			t.Fatal("the term's session is the one that ended")
		default:
		}
		o.t.sess.Close()
	case <-ctx.Done():
		t.Fatal("the standby did not win after the leader resigned")
	}
	require.Contains(t, logs.String(), `"then":"keeps its place: the same lease in a new session"`)
	require.Equal(t, 1.0, testutil.ToFloat64(m.m.sessionsResumed))
}

// standbyOn is a master of cluster id on the etcd at endpoint, talking to
// it through cli (a lease of 2 s, 20 ms polls), and the buffer its JSON
// log lines go to.
func standbyOn(t *testing.T, id, endpoint string, cli *clientv3.Client) (*Master, *lockedBuffer) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ClusterID, cfg.Listen, cfg.EtcdEndpoints = id, "127.0.0.1:0", []string{endpoint}
	cfg.Environment, cfg.OplogPollIntervalMS, cfg.LeaderLeaseSeconds = "development", 20, 2
	logs := &lockedBuffer{}
	m, err := New(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	require.NoError(t, err)
	m.cli = cli
	return m, logs
}

// queuedBeside waits for the election key under prefix that is not the
// leader's: the standby's place in the queue.
func queuedBeside(ctx context.Context, t *testing.T, cli *clientv3.Client, prefix string, leader clientv3.LeaseID) *mvccpb.KeyValue {
	t.Helper()
	var queued *mvccpb.KeyValue
	require.Eventually(t, func() bool {
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix())
		if err != nil {
			return false
		}
		for _, kv := range resp.Kvs {
			if clientv3.LeaseID(kv.Lease) != leader {
				queued = kv
			}
		}
		return queued != nil
	}, 10*time.Second, 20*time.Millisecond, "the standby never campaigned")
	return queued
}

// keepAliveStall holds back the answers of a client's lease keep-alive
// streams while set (the requests still go out, so etcd renews the lease).
type keepAliveStall struct {
	mu      sync.Mutex
	stalled bool
}

func (s *keepAliveStall) set(v bool) {
	s.mu.Lock()
	s.stalled = v
	s.mu.Unlock()
}

func (s *keepAliveStall) held() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stalled
}

func (s *keepAliveStall) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || !strings.HasSuffix(method, "/LeaseKeepAlive") {
		return cs, err
	}
	return &stallingStream{ClientStream: cs, stall: s}, nil
}

type stallingStream struct {
	grpc.ClientStream
	stall *keepAliveStall
}

func (s *stallingStream) RecvMsg(msg any) error {
	for s.stall.held() {
		select {
		case <-s.Context().Done():
			return s.Context().Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return s.ClientStream.RecvMsg(msg)
}
