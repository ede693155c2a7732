package batchlog

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract"
)

func sameBatch(a, b Batch) bool {
	if a.ID != b.ID || a.FirstSeq != b.FirstSeq || a.LastSeq != b.LastSeq || len(a.Entries) != len(b.Entries) {
		return false
	}
	for i := range a.Entries {
		x, y := a.Entries[i], b.Entries[i]
		if x.Op != y.Op || x.Tenant != y.Tenant || x.Key != y.Key || !bytes.Equal(x.Payload, y.Payload) {
			return false
		}
	}
	return true
}

// TestBatchVectorsEncode: every accepted upstream record is what EncodeBatch
// writes for its input, byte for byte, with upstream's checksum.
func TestBatchVectorsEncode(t *testing.T) {
	vs := readVectors[batchVector](t, "batches.jsonl")
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			want := mustB64(t, v.ValueB64)
			got, err := EncodeBatch(v.Input.batch(t))
			if err != nil {
				t.Fatalf("EncodeBatch: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("EncodeBatch:\n got %q\nwant %q", trunc(got), trunc(want))
			}
			if !strings.HasSuffix(string(got), ","+itoa(uint64(v.Checksum))+"]") {
				t.Fatalf("checksum is not %d", v.Checksum)
			}
			if key := BuildBatchRecordKey("vectors", v.Input.BatchID); key != v.EtcdKey {
				t.Fatalf("key %q, want %q", key, v.EtcdKey)
			}
		})
	}
	t.Logf("%d batches.jsonl vectors encoded", len(vs))
}

// TestBatchVectorsDecode: every accepted upstream record decodes to its
// input (or to what upstream decodes it to, for the lossy ones), and takes
// the fast path; the general path agrees.
func TestBatchVectorsDecode(t *testing.T) {
	vs := readVectors[batchVector](t, "batches.jsonl")
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			want := v.Input.batch(t)
			if !v.DecodeIsExact {
				if v.Decoded == nil {
					t.Fatal("vector has decode_is_exact false and no decoded")
				}
				want = v.Decoded.batch(t)
			}
			data := mustB64(t, v.ValueB64)
			got, err := DecodeBatch(data)
			if err != nil {
				t.Fatalf("DecodeBatch: %v", err)
			}
			if !sameBatch(got, want) {
				t.Fatalf("DecodeBatch:\n got %+v\nwant %+v", got, want)
			}
			fast, ok := decodeCanonicalBatch(data)
			if !ok || !sameBatch(fast, want) {
				t.Fatalf("fast path: ok=%v %+v", ok, fast)
			}
			slow, err := decodeGeneralBatch(data)
			if err != nil || !sameBatch(slow, want) {
				t.Fatalf("general path: %v %+v", err, slow)
			}
			if err := got.Lossless(); err != nil {
				t.Fatalf("a decoded batch is always lossless: %v", err)
			}
			if in := v.Input.batch(t); (in.Lossless() == nil) != v.DecodeIsExact {
				t.Fatalf("input Lossless() = %v, decode_is_exact %v", in.Lossless(), v.DecodeIsExact)
			}
		})
	}
	t.Logf("%d batches.jsonl vectors decoded", len(vs))
}

// TestBatchVectorsLenient: every non-canonical value upstream accepts is
// accepted here, decodes to what upstream decoded, and re-encodes to the
// canonical value.
func TestBatchVectorsLenient(t *testing.T) {
	vs := readVectors[batchVector](t, "lenient-batches.jsonl")
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			if !v.Accepted || v.Decoded == nil {
				t.Fatal("lenient vector not marked accepted with decoded")
			}
			want := v.Decoded.batch(t)
			got, err := DecodeBatch(mustB64(t, v.ValueB64))
			if err != nil {
				t.Fatalf("DecodeBatch: %v", err)
			}
			if !sameBatch(got, want) {
				t.Fatalf("DecodeBatch:\n got %+v\nwant %+v", got, want)
			}
			enc, err := EncodeBatch(got)
			if err != nil {
				t.Fatalf("EncodeBatch: %v", err)
			}
			if canon := mustB64(t, v.CanonicalValueB64); !bytes.Equal(enc, canon) {
				t.Fatalf("re-encoded:\n got %q\nwant %q", enc, canon)
			}
		})
	}
	t.Logf("%d lenient-batches.jsonl vectors accepted", len(vs))
}

// kindOfReason maps upstream's reasons to the sentinel the decoder wraps.
func kindOfReason(reason string) error {
	switch {
	case strings.HasPrefix(reason, "* Line"), strings.Contains(reason, "stackLimit"),
		reason == reasonSixElements, reason == reasonFieldTypes,
		reason == reasonFourElements, reason == reasonEntryTypes, reason == reasonBase64:
		return contract.ErrMalformed
	case reason == reasonSchema:
		return contract.ErrVersion
	case reason == reasonSpan, reason == reasonBatchID:
		return contract.ErrSpan
	case reason == reasonChecksum:
		return contract.ErrChecksum
	case reason == reasonOpRange:
		return contract.ErrUnknownOp
	case reason == reasonTenant:
		return contract.ErrTenant
	case strings.HasPrefix(reason, "object_key too large"), strings.HasPrefix(reason, "payload too large"):
		return contract.ErrTooLarge
	}
	return nil
}

// TestBatchVectorsBad: every value upstream rejects is rejected, with
// upstream's reason and the matching sentinel; where upstream throws (stack
// limit) this decoder returns an error.
func TestBatchVectorsBad(t *testing.T) {
	vs := readVectors[batchVector](t, "bad-batches.jsonl")
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			if v.Accepted {
				t.Fatal("bad vector marked accepted")
			}
			_, err := DecodeBatch(mustB64(t, v.ValueB64))
			var de *contract.Error
			if !errors.As(err, &de) {
				t.Fatalf("DecodeBatch error %v, want *contract.Error", err)
			}
			if v.Throws != "" {
				if de.Reason != v.Throws {
					t.Fatalf("reason %q, upstream threw %q", de.Reason, v.Throws)
				}
			} else if de.Reason != v.Error {
				t.Fatalf("reason:\n got %q\nwant %q", de.Reason, v.Error)
			}
			reason := v.Error
			if v.Throws != "" {
				reason = v.Throws
			}
			kind := kindOfReason(reason)
			if kind == nil {
				t.Fatalf("no sentinel for upstream reason %q", v.Error)
			}
			if !errors.Is(err, kind) {
				t.Fatalf("error %v is not %v", err, kind)
			}
		})
	}
	t.Logf("%d bad-batches.jsonl vectors rejected", len(vs))
}

func TestEncodeBatchValidates(t *testing.T) {
	ok := Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []Entry{{Op: OpRemove, Tenant: "t", Key: "k"}}}
	if _, err := EncodeBatch(ok); err != nil {
		t.Fatalf("valid batch: %v", err)
	}
	mutate := func(f func(*Batch)) Batch {
		b := ok
		b.Entries = append([]Entry(nil), ok.Entries...)
		f(&b)
		return b
	}
	cases := []struct {
		name string
		b    Batch
		kind error
	}{
		{"batch_id_zero", mutate(func(b *Batch) { b.ID = 0 }), contract.ErrSpan},
		{"first_seq_zero", mutate(func(b *Batch) { b.FirstSeq, b.LastSeq = 0, 0 }), contract.ErrSpan},
		{"no_entries", mutate(func(b *Batch) { b.Entries = nil; b.LastSeq = 0 }), contract.ErrSpan},
		{"last_seq_mismatch", mutate(func(b *Batch) { b.LastSeq = 2 }), contract.ErrSpan},
		{"op_zero", mutate(func(b *Batch) { b.Entries[0].Op = 0 }), contract.ErrUnknownOp},
		{"op_eight", mutate(func(b *Batch) { b.Entries[0].Op = 8 }), contract.ErrUnknownOp},
		{"tenant_reserved", mutate(func(b *Batch) { b.Entries[0].Tenant = "_x" }), contract.ErrTenant},
		{"tenant_del", mutate(func(b *Batch) { b.Entries[0].Tenant = "a\x7f" }), contract.ErrTenant},
		{"key_4097", mutate(func(b *Batch) { b.Entries[0].Key = strings.Repeat("k", 4097) }), contract.ErrTooLarge},
		{"payload_over_10MiB", mutate(func(b *Batch) { b.Entries[0].Payload = make([]byte, MaxPayloadSize+1) }), contract.ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := EncodeBatch(c.b)
			if !errors.Is(err, c.kind) {
				t.Fatalf("EncodeBatch error %v, want %v", err, c.kind)
			}
		})
	}
	// Op 4 passes the codec, as upstream's does.
	lease := mutate(func(b *Batch) { b.Entries[0].Op = OpLeaseRenew })
	if _, err := EncodeBatch(lease); err != nil {
		t.Fatalf("LEASE_RENEW: %v", err)
	}
}

func TestLossless(t *testing.T) {
	b := Batch{ID: 1, FirstSeq: 1, LastSeq: 2, Entries: []Entry{
		{Op: OpRemove, Key: "ok-ключ"}, {Op: OpRemove, Key: "bad\xff"},
	}}
	err := b.Lossless()
	var de *contract.Error
	if !errors.Is(err, contract.ErrLossy) || !errors.Is(err, contract.ErrMalformed) || !errors.As(err, &de) || de.Entry != 1 {
		t.Fatalf("Lossless() = %v", err)
	}
	enc, err := EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(enc)
	if err != nil {
		t.Fatal(err)
	}
	if got.Entries[0].Key != "ok-ключ" || got.Entries[1].Key != "bad\ufffd" {
		t.Fatalf("round trip keys %q %q", got.Entries[0].Key, got.Entries[1].Key)
	}
}

// TestDecodeBatchRestrictions: inputs jsoncpp would accept but this codec
// refuses (README "Deliberate differences"), each with a reason of ours.
func TestDecodeBatchRestrictions(t *testing.T) {
	canonical, err := EncodeBatch(Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []Entry{{Op: OpRemove, Tenant: "default", Key: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	// [1,1,1,1,[[3,"default","k",""]],857800285]
	for _, in := range []string{
		`[1,/*c*/1,1,1,[[3,"default","k",""]],857800285]`,
		`[1,1,1,1,[[3,"default","k",""],],857800285]`,
		`[01,1,1,1,[[3,"default","k",""]],857800285]`,
		`[+1,1,1,1,[[3,"default","k",""]],857800285]`,
		`[1.,1,1,1,[[3,"default","k",""]],857800285]`,
		"[1,1,1,1,[[3,\"default\",\"k\t\",\"\"]],857800285]",
		`[1,1,1,1,[[3,"default","\udc00",""]],857800285]`,
		`[1,1,1,1,[[3,"default","\ud800\u0041",""]],857800285]`,
	} {
		_, err := DecodeBatch([]byte(in))
		var de *contract.Error
		if !errors.As(err, &de) || !errors.Is(err, contract.ErrMalformed) || !strings.Contains(de.Reason, "jsoncpp accepts this") {
			t.Errorf("%s: %v", in, err)
		}
	}
	if _, err := DecodeBatch(canonical); err != nil {
		t.Fatal(err)
	}
}

func trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:150]) + "..." + string(b[len(b)-150:])
	}
	return string(b)
}

func itoa(v uint64) string { return string(appendUint(nil, v)) }

func appendUint(dst []byte, v uint64) []byte {
	if v >= 10 {
		dst = appendUint(dst, v/10)
	}
	return append(dst, byte('0'+v%10))
}

// TestEntryEncodedLen: a record is exactly its overhead-free frame plus
// each entry's EncodedLen and the commas between them, and never more than
// RecordOverhead plus those.
func TestEntryEncodedLen(t *testing.T) {
	entries := []Entry{
		{Op: OpRemove, Tenant: "t", Key: "k"},
		{Op: OpPutEnd, Tenant: "", Key: "ünï \"q\" \x01/\x7f 😀", Payload: bytes.Repeat([]byte{7}, 301)},
		{Op: OpSegmentMount, Key: "10.0.0.1:7000", Payload: []byte{1}},
	}
	b := Batch{ID: ^uint64(0), FirstSeq: ^uint64(0) - 2, LastSeq: ^uint64(0), Entries: entries}
	rec, err := EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	sum := len(entries) - 1
	for i := range entries {
		one, err := EncodeBatch(Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: entries[i : i+1]})
		if err != nil {
			t.Fatal(err)
		}
		elem := one[len("[1,1,1,1,[") : bytes.LastIndexByte(one, ',')-1]
		if got := entries[i].EncodedLen(); got != len(elem) {
			t.Errorf("entry %d: EncodedLen %d, element %q is %d bytes", i, got, elem, len(elem))
		}
		sum += entries[i].EncodedLen()
	}
	if len(rec) > RecordOverhead+sum {
		t.Errorf("record of %d bytes, bound %d", len(rec), RecordOverhead+sum)
	}
}
