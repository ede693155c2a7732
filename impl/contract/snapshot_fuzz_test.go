package contract

import (
	"bytes"
	"context"
	"errors"
	"path"
	"strings"
	"testing"
)

// snapshotErrors are the kinds a snapshot record's decoder may report.
var snapshotErrors = []error{ErrSnapshotMalformed, ErrSnapshotVersion, ErrSnapshotTruncated, ErrSnapshotOverflow, ErrSnapshotChecksum,
	ErrSnapshotCount, ErrSnapshotCursor, ErrSnapshotIdentity, ErrSnapshotTrailing, ErrChecksumTag}

func typedSnapshotError(err error) bool {
	for _, k := range snapshotErrors {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// FuzzDecodeDescriptor: no input panics; every refusal is typed; a schema-1
// descriptor that decodes is valid and re-encodes to one that decodes the
// same, a legacy one re-encodes to the three fields it was read from.
func FuzzDecodeDescriptor(f *testing.F) {
	f.Add([]byte(goldenDescriptor))
	f.Add([]byte(goldenLegacyDescriptor))
	f.Add([]byte(" 0|0|1\n"))
	f.Add([]byte(strings.Replace(goldenDescriptor, `"schema_version": 1`, `"schema_version": 2`, 1)))
	store, p := testSnapshot(nil)
	f.Add(store[path.Join(p.ObjectPrefix, DescriptorName)])
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeDescriptor(data)
		if err != nil {
			if !typedSnapshotError(err) {
				t.Fatalf("%q: untyped error %v", data, err)
			}
			return
		}
		if d.Legacy() {
			if got := EncodeLegacyDescriptor(d.LastIncludedSeq, d.ProducerViewVersion, d.CreatedAtMS); !bytes.Equal(got, bytes.TrimSpace(data)) {
				t.Fatalf("legacy %q re-encodes to %q", data, got)
			}
			return
		}
		enc, err := d.Encode()
		if err != nil {
			t.Fatalf("%q: accepted an invalid descriptor: %v", data, err)
		}
		if back, err := DecodeDescriptor(enc); err != nil || back != d {
			t.Fatalf("%+v re-encoded decodes to %+v, %v", d, back, err)
		}
	})
}

// FuzzDecodeManifest: no input panics; every refusal is typed; what
// decodes is valid and re-encodes to a manifest that decodes the same.
func FuzzDecodeManifest(f *testing.F) {
	f.Add([]byte(goldenManifest))
	f.Add([]byte(`{"schema_version":1}`))
	store, p := testSnapshot(nil)
	f.Add(store[path.Join(p.ObjectPrefix, ManifestObject)])
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			if !typedSnapshotError(err) {
				t.Fatalf("%q: untyped error %v", data, err)
			}
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("%q: accepted an invalid manifest: %v", data, err)
		}
		back, err := DecodeManifest(enc)
		if again, _ := back.Encode(); err != nil || !bytes.Equal(again, enc) {
			t.Fatalf("%+v re-encoded decodes to %+v, %v", m, back, err)
		}
	})
}

// FuzzParseEnvelopeHeader: no input panics; every refusal is typed; what
// parses marshals back to the bytes it was read from.
func FuzzParseEnvelopeHeader(f *testing.F) {
	b := goldenHeaderValue().Marshal()
	f.Add(b[:])
	store, p := testSnapshot(nil)
	f.Add(store[path.Join(p.ObjectPrefix, SegmentsObject)][:EnvelopeHeaderSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseEnvelopeHeader(data)
		if err != nil {
			if !typedSnapshotError(err) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again := h.Marshal()
		if !bytes.Equal(again[:], data[:EnvelopeHeaderSize]) {
			t.Fatalf("header %x marshals to %x", data[:EnvelopeHeaderSize], again)
		}
	})
}

// FuzzOpenSnapshot: any segments object, manifest or descriptor in place
// of a good snapshot's: no input panics, every refusal names an object of
// the snapshot, and what opens has an envelope header that marshals back
// to the first bytes of the segments object.
func FuzzOpenSnapshot(f *testing.F) {
	store, p := testSnapshot(nil)
	descKey, manKey, segKey := path.Join(p.ObjectPrefix, DescriptorName), path.Join(p.ObjectPrefix, ManifestObject), path.Join(p.ObjectPrefix, SegmentsObject)
	f.Add(store[descKey], store[manKey], store[segKey])
	f.Add(store[descKey], store[manKey], store[segKey][:EnvelopeHeaderSize])
	f.Fuzz(func(t *testing.T, desc, man, seg []byte) {
		s, p := testSnapshot(nil)
		s[descKey], s[manKey], s[segKey] = desc, man, seg
		o, err := OpenSnapshot(context.Background(), s, p)
		if err != nil {
			if !strings.Contains(err.Error(), p.ObjectPrefix+"/") {
				t.Fatalf("error names no object: %v", err)
			}
			return
		}
		h := o.Header.Marshal()
		if !bytes.Equal(h[:], seg[:EnvelopeHeaderSize]) {
			t.Fatalf("opened a snapshot whose header is not its segments object's")
		}
	})
}
