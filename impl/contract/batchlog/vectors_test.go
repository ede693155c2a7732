package batchlog

import (
	"testing"

	"github.com/oplogha/oplogha/impl/contract/internal/vectortest"
)

// The golden vectors in testdata/upstream were written by upstream's own
// code (see testdata/upstream/README.md). Each test reads one file and runs
// every line, naming the line's "name" when it fails.

func readVectors[T any](t testing.TB, file string) []T { return vectortest.Read[T](t, file) }

func mustB64(t testing.TB, s string) []byte { return vectortest.B64(t, s) }

func vecString(t testing.TB, plain, b64 *string) string { return vectortest.String(t, plain, b64) }

type vecEntry struct {
	OpType     uint8   `json:"op_type"`
	Tenant     *string `json:"tenant"`
	TenantB64  *string `json:"tenant_b64"`
	Key        *string `json:"key"`
	KeyB64     *string `json:"key_b64"`
	PayloadB64 string  `json:"payload_b64"`
}

type vecBatch struct {
	BatchID  uint64     `json:"batch_id"`
	FirstSeq uint64     `json:"first_seq"`
	LastSeq  uint64     `json:"last_seq"`
	Entries  []vecEntry `json:"entries"`
}

func (v *vecBatch) batch(t testing.TB) Batch {
	t.Helper()
	b := Batch{ID: v.BatchID, FirstSeq: v.FirstSeq, LastSeq: v.LastSeq}
	for _, e := range v.Entries {
		p := mustB64(t, e.PayloadB64)
		if len(p) == 0 {
			p = nil
		}
		b.Entries = append(b.Entries, Entry{
			Op:      OpType(e.OpType),
			Tenant:  vecString(t, e.Tenant, e.TenantB64),
			Key:     vecString(t, e.Key, e.KeyB64),
			Payload: p,
		})
	}
	return b
}

// batchVector is a line of batches.jsonl, bad-batches.jsonl or lenient-batches.jsonl.
type batchVector struct {
	Name              string    `json:"name"`
	Input             vecBatch  `json:"input"`
	Decoded           *vecBatch `json:"decoded"`
	DecodeIsExact     bool      `json:"decode_is_exact"`
	ValueB64          string    `json:"value_b64"`
	Checksum          uint32    `json:"checksum"`
	EtcdKey           string    `json:"etcd_key"`
	Accepted          bool      `json:"accepted"`
	Error             string    `json:"error"`
	Throws            string    `json:"throws"`
	CanonicalValueB64 string    `json:"canonical_value_b64"`
}

type prefixVector struct {
	Name    string `json:"name"`
	EtcdKey string `json:"etcd_key"`
	Input   struct {
		BatchID uint64 `json:"batch_id"`
		LastSeq uint64 `json:"last_seq"`
	} `json:"input"`
	ValueB64 string `json:"value_b64"`
	Accepted bool   `json:"accepted"`
	Error    string `json:"error"`
	BatchID  uint64 `json:"batch_id"`
	LastSeq  uint64 `json:"last_seq"`
}

type keyVector struct {
	ClusterID        string `json:"cluster_id"`
	BatchID          uint64 `json:"batch_id"`
	BatchKey         string `json:"batch_key"`
	DurablePrefixKey string `json:"durable_prefix_key"`
	ProducerViewKey  string `json:"producer_view_key"`
	RangeBeginB64    string `json:"range_after_begin_b64"`
	RangeEndB64      string `json:"range_after_end_b64"`
}
