package master

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

// Eight concurrent puts of ~490 KiB of stored payload each, what the API
// accepts, all commit and the primary keeps serving. Found by a colleague:
// they went into one batch whose etcd txn was over etcd's 1.5 MiB request
// limit; all eight were answered commit_unknown and the primary stopped
// serving. An entry over the batch budget, and etcd refusing a request for
// its size, are definite failures: too_large, 413.
func TestLargeConcurrentPutsAllCommit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := etcdtest.Start(t)
	cfg := DefaultConfig()
	cfg.ClusterID, cfg.Listen, cfg.EtcdEndpoints = "large", "127.0.0.1:0", []string{srv.Endpoint}
	cfg.Environment, cfg.OplogPollIntervalMS, cfg.LeaderLeaseSeconds = "development", 20, 2
	m, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("master did not stop")
		}
	})
	require.Eventually(t, m.isServing, 20*time.Second, 20*time.Millisecond)
	base := "http://" + m.Addr()
	post := func(path string, body any) (int, MutationResponse) {
		data, err := json.Marshal(body)
		require.NoError(t, err)
		resp, err := http.Post(base+path, "application/json", bytes.NewReader(data))
		require.NoError(t, err)
		defer resp.Body.Close()
		var res MutationResponse
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&res))
		return resp.StatusCode, res
	}

	seg := state.Segment{Endpoint: strings.Repeat("e", 470), Name: "s", Capacity: 1 << 40, Kind: state.ReplicaMemory}
	status, res := post("/v1/segments/mount", seg)
	require.Equal(t, http.StatusOK, status, "%+v", res)
	put := func(key string) PutRequest {
		req := PutRequest{ObjectRef: ObjectRef{Tenant: "t", Key: key}, ClientID: state.UUID{First: 1}, Size: 1}
		for i := range MaxReplicas {
			req.Replicas = append(req.Replicas, state.Replica{ID: uint64(i + 1), Kind: state.ReplicaMemory,
				Segment: seg.Endpoint, Offset: uint64(i), Length: 1, Status: state.ReplicaComplete})
		}
		return req
	}
	stored := len(state.PutEnd("t", "k0", state.Object{ClientID: state.UUID{First: 1}, Size: 1, Replicas: put("k0").Replicas}).Payload)
	require.Greater(t, stored, 480<<10)
	require.LessOrEqual(t, stored, MaxPayloadBytes, "the API accepts it")

	const n = 8
	var wg sync.WaitGroup
	results := make([]MutationResponse, n)
	statuses := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], results[i] = post("/v1/objects/put", put(fmt.Sprintf("k%d", i)))
		}()
	}
	wg.Wait()
	batches := map[uint64]bool{}
	seqs := map[uint64]bool{}
	for i, r := range results {
		require.Equal(t, http.StatusOK, statuses[i], "put %d: %+v", i, r)
		require.Equal(t, OutcomeOK, r.Outcome)
		require.False(t, seqs[r.Seq], "seq %d twice", r.Seq)
		seqs[r.Seq], batches[r.BatchID] = true, true
	}
	require.Len(t, batches, n, "~650 KiB of record each: one a batch under the 1 MiB budget")
	require.True(t, m.isServing(), "the primary keeps serving")

	// An entry over the batch budget (the API refuses it sooner; the
	// committer refuses it all the same) fails definitely and changes nothing.
	before := m.cursor()
	huge := state.PutEnd("t", "huge", state.Object{Size: 1, Replicas: bulkReplicas(put("x").Replicas[0].Segment, 800<<10)})
	_, err = m.submit(ctx, huge)
	require.ErrorIs(t, err, oplog.ErrBatchTooLarge)
	require.Equal(t, codeRule{code: "too_large", status: http.StatusRequestEntityTooLarge, outcome: OutcomeFailed}, withoutErr(classify(err)))
	require.Equal(t, before, m.cursor())
	require.True(t, m.isServing())

	// etcd refusing an append for its size (its --max-request-bytes, 1.5 MiB
	// here) is the same definite failure.
	ks := keyspace.Must("large-etcd")
	view, err := oplog.ClaimProducerView(ctx, srv.Client, ks)
	require.NoError(t, err)
	w, err := oplog.NewWriter(ctx, srv.Client, ks, view)
	require.NoError(t, err)
	_, err = w.Append(ctx, []state.Entry{state.PutEnd("t", "huge", state.Object{Size: 1, Replicas: bulkReplicas(put("x").Replicas[0].Segment, 1200<<10)})})
	require.ErrorIs(t, err, oplog.ErrBatchTooLarge)
	require.Equal(t, codeRule{code: "too_large", status: http.StatusRequestEntityTooLarge, outcome: OutcomeFailed}, withoutErr(classify(err)))

	status, res = post("/v1/objects/put", PutRequest{ObjectRef: ObjectRef{Tenant: "t", Key: "small"}, ClientID: state.UUID{First: 1}, Size: 1})
	require.Equal(t, http.StatusOK, status, "%+v", res)
}

func withoutErr(r codeRule) codeRule {
	r.err = nil
	return r
}

// bulkReplicas is a replica list whose PUT_END payload takes about n
// bytes: protocol strings of up to 4000 bytes carry the bulk.
func bulkReplicas(seg string, n int) []state.Replica {
	k := (n + 3999) / 4000
	reps := make([]state.Replica, k)
	for i := range reps {
		reps[i] = state.Replica{ID: uint64(i + 1), Kind: state.ReplicaMemory, Segment: seg, Length: 1,
			Status: state.ReplicaComplete, Protocol: strings.Repeat("p", n/k)}
	}
	return reps
}
