package oplog

import (
	"bytes"
	"testing"
)

// Each decoder must never panic, and anything it accepts must be canonical:
// re-encoding the decoded value gives back the input byte for byte.

func FuzzDecodeBatch(f *testing.F) {
	good, _ := EncodeBatch(sampleBatch())
	f.Add(good)
	f.Add([]byte(`[1,1,1,1,[[3,"t","k",""]],0]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBatch(data)
		if err != nil {
			return
		}
		again, err := EncodeBatch(b)
		if err != nil {
			t.Fatalf("accepted %q but cannot re-encode: %v", data, err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("accepted non-canonical %q (canonical %q)", data, again)
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
		if !bytes.Equal(p.Encode(), data) {
			t.Fatalf("accepted non-canonical %q", data)
		}
	})
}

func FuzzDecodeProducerView(f *testing.F) {
	f.Add([]byte("1"))
	f.Add([]byte("18446744073709551615"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeProducerView(data)
		if err != nil {
			return
		}
		if v == 0 || !bytes.Equal(EncodeProducerView(v), data) {
			t.Fatalf("accepted %q as %d", data, v)
		}
	})
}

func FuzzDecodeFloor(f *testing.F) {
	f.Add(Floor{BatchID: 12}.Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		fl, err := DecodeFloor(data)
		if err != nil {
			return
		}
		if !bytes.Equal(fl.Encode(), data) {
			t.Fatalf("accepted non-canonical %q", data)
		}
	})
}
