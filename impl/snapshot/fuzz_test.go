package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/oplogha/oplogha/impl/state"
)

// The decoders of every stored snapshot object never panic, and what they
// accept is internally consistent.

func FuzzDecodeDescriptor(f *testing.F) {
	f.Add([]byte("120|3|1700000000123"))
	f.Add([]byte(`{"snapshot_id":"00000000000000000001-1f-0123456789abcdef","schema_version":1,"last_included_seq":1,` +
		`"last_included_batch_id":1,"producer_view_version":1,"payload_checksum":"crc64nvme:AQIDBAUGBwg=","payload_size":10,` +
		`"manifest_key":"p/manifest.json","object_prefix":"p","previous_snapshot_id":"","created_at_ms":1}`))
	f.Add(EncodeLegacy(120, 3, 1700000000123))
	descriptors, _ := preparedRecords(f)
	for _, d := range descriptors {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeDescriptor(data)
		if err != nil {
			return
		}
		if d.Legacy() {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("accepted an invalid descriptor: %v", err)
		}
	})
}

func FuzzDecodeManifest(f *testing.F) {
	f.Add([]byte(`{"schema_version":1}`))
	f.Add([]byte(`{"schema_version":1,"snapshot_id":"00000000000000000001-1f-0123456789abcdef","last_included_seq":1,` +
		`"last_included_batch_id":1,"producer_view_version":1,"payload_checksum":"crc64nvme:AQIDBAUGBwg=","payload_size":20,` +
		`"uncompressed_size":1,"object_count":1,"chunk_objects":4,"segments":{"key":"segments.bin","objects":0,"size":10,` +
		`"checksum":"crc64nvme:AQIDBAUGBwg="},"chunks":[{"key":"chunks/000000.bin","objects":1,` +
		`"size":10,"checksum":"crc64nvme:AQIDBAUGBwg="}]}`))
	_, manifests := preparedRecords(f)
	for _, m := range manifests {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid manifest: %v", err)
		}
	})
}

func FuzzParseHeader(f *testing.F) {
	h := Header{EnvelopeSchemaVersion: 1, PayloadCodecVersion: 1, Cursor: state.Cursor{BatchID: 3, Seq: 9}, EncodedSize: 100, UncompressedSize: 50}
	b := h.Marshal()
	f.Add(b[:])
	// and the headers of real payloads, as the encoder writes them
	for _, shape := range []struct{ n, chunk int }{{0, 8}, {1, 8}, {7, 3}} {
		data, _ := samplePayload(f, shape.n, shape.chunk)
		f.Add(data[:HeaderSize])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHeader(data)
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		again := h.Marshal()
		if !bytes.Equal(again[:], data[:HeaderSize]) {
			t.Fatalf("header does not round-trip")
		}
	})
}

// FuzzDecodePayload feeds arbitrary streams (seeded with real payloads) to
// the chunk decoder and the restore path.
func FuzzDecodePayload(f *testing.F) {
	for _, n := range []int{0, 3, 20} {
		b := state.NewBuilder()
		_ = b.AddSegment(state.Segment{Endpoint: "s", Name: "n", Capacity: 1 << 30, Kind: state.ReplicaMemory})
		for i := 0; i < n; i++ {
			_ = b.AddObject(state.ObjectKey{Tenant: "t", Key: string(rune('a' + i))}, state.Object{ClientID: state.UUID{First: 1}, Size: 1,
				Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: "s", Length: 1, Status: state.ReplicaComplete}}})
		}
		cur := state.Cursor{}
		if n > 0 {
			cur = state.Cursor{BatchID: 1, Seq: uint64(n)}
		}
		s, _ := b.Finish(cur)
		p, _ := os.CreateTemp("", "fuzzseed")
		if _, err := Encode(s.Capture(), p, 8); err == nil {
			data, _ := os.ReadFile(p.Name())
			f.Add(data)
		}
		p.Close()
		os.Remove(filepath.Clean(p.Name()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, h, err := Restore(bytes.NewReader(data))
		if err != nil {
			if !typed(err) && !isBuilderErr(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if st.Cursor() != h.Cursor {
			t.Fatalf("restored cursor %v, header %v", st.Cursor(), h.Cursor)
		}
	})
}
