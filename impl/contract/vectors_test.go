package contract

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The golden vectors in testdata/upstream were written by upstream's own
// code (see testdata/upstream/README.md). Each test reads one file and runs
// every line, naming the line's "name" when it fails.

func vectorPath(file string) string { return filepath.Join("testdata", "upstream", file) }

// readVectors decodes every line of a vector file into a T (numbers as
// json.Number where T has interface fields) and returns them with their line numbers.
func readVectors[T any](t testing.TB, file string) []T {
	t.Helper()
	f, err := os.Open(vectorPath(file))
	if err != nil {
		t.Fatalf("open vectors: %v", err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var v T
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s line %d: %v", file, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no vectors", file)
	}
	return out
}

func mustB64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("vector base64 %q: %v", s, err)
	}
	return b
}

// vecString is a vector string: the raw bytes of the *_b64 field when the
// vector has one (they are authoritative), else the plain field.
func vecString(t testing.TB, plain, b64 *string) string {
	t.Helper()
	switch {
	case b64 != nil:
		return string(mustB64(t, *b64))
	case plain != nil:
		return *plain
	}
	t.Fatalf("vector string has neither a value nor _b64")
	return ""
}

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

type payloadVector struct {
	Name                string         `json:"name"`
	Type                string         `json:"type"`
	OpType              uint8          `json:"op_type"`
	Fields              map[string]any `json:"fields"`
	BytesB64            string         `json:"bytes_b64"`
	BytesB64TypeLiteral string         `json:"bytes_b64_type_literal"`
}
