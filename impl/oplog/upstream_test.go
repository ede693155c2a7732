package oplog

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/state"
)

// upstreamVector is the part of a line of impl/contract's batches.jsonl
// (written by upstream Mooncake's own encoder) these tests read.
type upstreamVector struct {
	Name          string         `json:"name"`
	Input         upstreamBatch  `json:"input"`
	Decoded       *upstreamBatch `json:"decoded"`
	DecodeIsExact bool           `json:"decode_is_exact"`
	ValueB64      string         `json:"value_b64"`
}

type upstreamBatch struct {
	BatchID  uint64 `json:"batch_id"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Entries  []struct {
		OpType     uint8   `json:"op_type"`
		Tenant     *string `json:"tenant"`
		TenantB64  *string `json:"tenant_b64"`
		Key        *string `json:"key"`
		KeyB64     *string `json:"key_b64"`
		PayloadB64 string  `json:"payload_b64"`
	} `json:"entries"`
}

func readUpstreamVectors(t *testing.T) []upstreamVector {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "contract", "testdata", "upstream", "batches.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var out []upstreamVector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var v upstreamVector
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

// batch is the vector's batch as state holds it (raw bytes where the
// vector has them: they are authoritative).
func (u *upstreamBatch) batch(t *testing.T) state.Batch {
	t.Helper()
	str := func(plain, raw *string) string {
		if raw != nil {
			return string(b64(t, *raw))
		}
		require.NotNil(t, plain)
		return *plain
	}
	b := state.Batch{ID: u.BatchID, FirstSeq: u.FirstSeq, LastSeq: u.LastSeq}
	for _, e := range u.Entries {
		p := b64(t, e.PayloadB64)
		if len(p) == 0 {
			p = nil
		}
		b.Entries = append(b.Entries, state.Entry{Op: state.OpType(e.OpType), Tenant: str(e.Tenant, e.TenantB64), Key: str(e.Key, e.KeyB64), Payload: p})
	}
	return b
}

// want is what upstream's decoder returns for the vector.
func (v *upstreamVector) want(t *testing.T) state.Batch {
	if v.DecodeIsExact {
		return v.Input.batch(t)
	}
	require.NotNil(t, v.Decoded, v.Name)
	return v.Decoded.batch(t)
}

func rawValue(t *testing.T, kv clientv3.KV, key string) []byte {
	t.Helper()
	resp, err := kv.Get(ctxT(t), key)
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1, key)
	return resp.Kvs[0].Value
}

// What the Writer appends through its real write path (fenced transactions
// into etcd) is byte for byte what batchlog.EncodeBatch, upstream's encoder,
// writes for the same entries; so are the durable prefix and the producer
// view it leaves; and for entries upstream's own encoder wrote into the
// vectors, the bytes are the vectors'.
func TestWriterWritesUpstreamRecords(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("vectors")
	w := newWriter(t, srv.Client, ks)
	require.Equal(t, string(mustView(t, w.View())), string(rawValue(t, srv.Client, ks.ProducerView())))

	vs := readUpstreamVectors(t)
	written := 0
	for _, v := range vs {
		in := v.Input.batch(t)
		if in.ID != w.Prefix().BatchID+1 || in.FirstSeq != w.Prefix().LastSeq+1 {
			continue
		}
		if _, err := toContract(in); err != nil {
			break // LEASE_RENEW: no applier takes it, so no writer writes it
		}
		b, err := w.Append(ctxT(t), in.Entries)
		require.NoError(t, err, v.Name)
		require.Equal(t, in, b, v.Name)
		require.Equal(t, string(b64(t, v.ValueB64)), string(rawValue(t, srv.Client, ks.Batch(b.ID))), "%s: the record upstream wrote", v.Name)
		written++
	}
	require.GreaterOrEqual(t, written, 5, "the vectors' first batches, up to the first LEASE_RENEW")

	seg := state.Segment{Endpoint: "10.0.0.1:7000", Name: "seg", Capacity: 1 << 30, Kind: state.ReplicaMemory}
	for _, entries := range [][]state.Entry{
		sampleBatch().Entries,
		{state.MountSegment(seg), state.PutRevoke("租户 ☃", "键/😀\x01\"\\"), state.Remove("", "k")},
		{state.PutEnd("t", strings.Repeat("k", batchlog.MaxObjectKeySize), state.Object{ClientID: state.UUID{First: 1},
			Size: 1, Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: seg.Endpoint,
				Length: 1, Status: state.ReplicaComplete}}})},
	} {
		b, err := w.Append(ctxT(t), entries)
		require.NoError(t, err)
		cb := batchlog.Batch{ID: b.ID, FirstSeq: b.FirstSeq, LastSeq: b.LastSeq}
		for _, e := range entries {
			cb.Entries = append(cb.Entries, batchlog.Entry{Op: batchlog.OpType(e.Op), Tenant: e.Tenant, Key: e.Key, Payload: e.Payload})
		}
		want, err := batchlog.EncodeBatch(cb)
		require.NoError(t, err)
		require.Equal(t, string(want), string(rawValue(t, srv.Client, ks.Batch(b.ID))), "batch %d", b.ID)
		require.Equal(t, string(batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: b.ID, LastSeq: b.LastSeq})),
			string(rawValue(t, srv.Client, ks.DurablePrefix())), "batch %d", b.ID)
	}
}

func mustView(t *testing.T, v uint64) []byte {
	t.Helper()
	b, err := batchlog.EncodeProducerView(int64(v))
	require.NoError(t, err)
	return b
}

// Upstream-written batches are readable by this package's reader: every
// vector decodes through DecodeBatch to what upstream's decoder returns, and
// the vectors' chain of batches 1..32 (seq 1..43, as upstream's encoder
// wrote them, put into etcd under upstream's keys with upstream's durable
// prefix) replays through the Reader from batch 1.
func TestReaderReadsUpstreamBatches(t *testing.T) {
	vs := readUpstreamVectors(t)
	for _, v := range vs {
		got, err := DecodeBatch(b64(t, v.ValueB64))
		require.NoError(t, err, v.Name)
		require.Equal(t, v.want(t), got, v.Name)
	}

	srv := etcdtest.Start(t)
	ks := keyspace.Must("vectors")
	chain := map[uint64]upstreamVector{}
	for _, v := range vs {
		if strings.HasSuffix(v.Name, "__type_literal_payload") {
			continue // the same batches, payloads in the other struct_pack variant
		}
		chain[v.Input.BatchID] = v
	}
	var last upstreamVector
	for id := uint64(1); ; id++ {
		v, ok := chain[id]
		if !ok {
			break
		}
		_, err := srv.Client.Put(ctxT(t), ks.Batch(id), string(b64(t, v.ValueB64)))
		require.NoError(t, err)
		last = v
	}
	require.Equal(t, uint64(32), last.Input.BatchID, "the vectors chain batches 1..32")
	prefix := batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: last.Input.BatchID, LastSeq: last.Input.LastSeq})
	_, err := srv.Client.Put(ctxT(t), ks.DurablePrefix(), string(prefix))
	require.NoError(t, err)

	r := &Reader{KV: srv.Client, Keyspace: ks, PageSize: 5}
	var read []state.Batch
	h, err := r.ReadAll(ctxT(t), func(b state.Batch) error { read = append(read, b); return nil })
	require.NoError(t, err)
	require.Equal(t, DurablePrefix{BatchID: 32, LastSeq: 43}, h.Prefix)
	require.Len(t, read, 32)
	for _, b := range read {
		v := chain[b.ID]
		require.Equal(t, v.want(t), b, v.Name)
	}
}
