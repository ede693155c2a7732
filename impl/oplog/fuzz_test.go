package oplog

import (
	"bytes"
	"reflect"
	"testing"
)

// Each decoder must never panic; whatever it accepts must mean one thing:
// re-encoding the decoded value gives a record that decodes to the same
// value (the decoders accept upstream's non-canonical forms, so the bytes
// may differ), and the reader's own invariants hold.

func FuzzDecodeBatch(f *testing.F) {
	good, _ := EncodeBatch(sampleBatch())
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBatch(data)
		if err != nil {
			return
		}
		if b.ID == 0 || b.FirstSeq == 0 || b.LastSeq-b.FirstSeq+1 != uint64(len(b.Entries)) {
			t.Fatalf("accepted %q with an inconsistent span %d %d..%d (%d entries)", data, b.ID, b.FirstSeq, b.LastSeq, len(b.Entries))
		}
		again, err := EncodeBatch(b)
		if err != nil {
			return // an entry the writer refuses (not UTF-8, or an op no applier knows)
		}
		c, err := DecodeBatch(again)
		if err != nil || !reflect.DeepEqual(b, c) {
			t.Fatalf("%q decoded to %+v, its re-encoding %q to %+v, %v", data, b, again, c, err)
		}
	})
}

func FuzzDecodeDurablePrefix(f *testing.F) {
	f.Add(DurablePrefix{BatchID: 3, LastSeq: 9}.Encode())
	f.Add(DurablePrefix{}.Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeDurablePrefix(data)
		if err != nil {
			return
		}
		if (p.BatchID == 0) != (p.LastSeq == 0) || p.LastSeq < p.BatchID {
			t.Fatalf("accepted inconsistent prefix %+v", p)
		}
		if q, err := DecodeDurablePrefix(p.Encode()); err != nil || q != p {
			t.Fatalf("%q: %+v re-encoded decodes to %+v, %v", data, p, q, err)
		}
	})
}

func FuzzDecodeProducerView(f *testing.F) {
	f.Add([]byte("1"))
	f.Add([]byte("9223372036854775807"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeProducerView(data)
		if err != nil {
			return
		}
		if v == 0 || v > MaxProducerView || !bytes.Equal(EncodeProducerView(v), data) {
			t.Fatalf("accepted %q as %d", data, v)
		}
	})
}
