package contract

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path"
	"strings"
	"testing"

	"github.com/minio/crc64nvme"
)

// The snapshot records below were written by impl/snapshot before they
// moved here; the bytes must not change (stored snapshots hold them, and
// their checksums are in the manifests and pointers that name them).
const (
	goldenDescriptor = `{
  "snapshot_id": "00000000000000000042-10-00112233445566aa",
  "schema_version": 1,
  "last_included_seq": 126,
  "last_included_batch_id": 42,
  "producer_view_version": 2,
  "payload_checksum": "crc64nvme:AQIDBAUGBwg=",
  "payload_size": 1000,
  "manifest_key": "snapshots/c1/00000000000000000042-10-00112233445566aa/manifest.json",
  "object_prefix": "snapshots/c1/00000000000000000042-10-00112233445566aa",
  "previous_snapshot_id": "00000000000000000040-10-ffeeddccbbaa9988",
  "created_at_ms": 1700000000123
}`
	goldenManifest = `{
  "schema_version": 1,
  "snapshot_id": "00000000000000000042-10-00112233445566aa",
  "last_included_seq": 126,
  "last_included_batch_id": 42,
  "producer_view_version": 2,
  "payload_checksum": "crc64nvme:AQIDBAUGBwg=",
  "payload_size": 1000,
  "uncompressed_size": 700,
  "object_count": 5,
  "chunk_objects": 4,
  "segments": {
    "key": "segments.bin",
    "objects": 2,
    "size": 400,
    "checksum": "crc64nvme:AAAAAAAAAAE="
  },
  "chunks": [
    {
      "key": "chunks/000000.bin",
      "objects": 4,
      "size": 500,
      "checksum": "crc64nvme:AAAAAAAAAAI="
    },
    {
      "key": "chunks/000001.bin",
      "objects": 1,
      "size": 100,
      "checksum": "crc64nvme:AAAAAAAAAAM="
    }
  ]
}`
	goldenEnvelopeHeader = "4f504c47534e415001000200010000007e000000000000002a00000000000000bc02000000000000" +
		"a003000000000000080706050403020105000000000000000200000095e41a43"
	goldenLegacyDescriptor = "120|3|1700000000123"
)

const goldenSnapshotPrefix = "snapshots/c1/00000000000000000042-10-00112233445566aa"

func goldenDescriptorValue() Descriptor {
	return Descriptor{SnapshotID: "00000000000000000042-10-00112233445566aa", SchemaVersion: 1, LastIncludedSeq: 126, LastIncludedBatchID: 42,
		ProducerViewVersion: 2, PayloadChecksum: CRC64NVME(0x0102030405060708), PayloadSize: 1000,
		ManifestKey: goldenSnapshotPrefix + "/manifest.json", ObjectPrefix: goldenSnapshotPrefix,
		PreviousSnapshotID: "00000000000000000040-10-ffeeddccbbaa9988", CreatedAtMS: 1700000000123}
}

func goldenManifestValue() Manifest {
	return Manifest{SchemaVersion: 1, SnapshotID: "00000000000000000042-10-00112233445566aa", LastIncludedSeq: 126, LastIncludedBatchID: 42,
		ProducerViewVersion: 2, PayloadChecksum: CRC64NVME(0x0102030405060708), PayloadSize: 1000, UncompressedSize: 700, ObjectCount: 5, ChunkObjects: 4,
		Segments: ManifestEntry{Key: "segments.bin", Objects: 2, Size: 400, Checksum: CRC64NVME(1)},
		Chunks: []ManifestEntry{{Key: "chunks/000000.bin", Objects: 4, Size: 500, Checksum: CRC64NVME(2)},
			{Key: "chunks/000001.bin", Objects: 1, Size: 100, Checksum: CRC64NVME(3)}}}
}

func goldenHeaderValue() EnvelopeHeader {
	return EnvelopeHeader{EnvelopeSchemaVersion: 1, PayloadCodecVersion: 2, Cursor: Cursor{BatchID: 42, Seq: 126}, UncompressedSize: 700,
		EncodedSize: 928, Checksum: 0x0102030405060708, ObjectCount: 5, ChunkCount: 2}
}

func TestDescriptorGolden(t *testing.T) {
	d := goldenDescriptorValue()
	enc, err := d.Encode()
	if err != nil || string(enc) != goldenDescriptor {
		t.Fatalf("Encode = %s, %v\nwant %s", enc, err, goldenDescriptor)
	}
	back, err := DecodeDescriptor([]byte(goldenDescriptor))
	if err != nil || back != d {
		t.Fatalf("DecodeDescriptor = %+v, %v", back, err)
	}
	if err := d.Agree(d.Pointer()); err != nil {
		t.Fatal(err)
	}
	p := d.Pointer()
	p.ProducerViewVersion++
	if err := d.Agree(p); !errors.Is(err, ErrSnapshotIdentity) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("a pointer that disagrees: %v", err)
	}
	if got := string(EncodeLegacyDescriptor(120, 3, 1700000000123)); got != goldenLegacyDescriptor {
		t.Fatalf("legacy = %q", got)
	}
	legacy, err := DecodeDescriptor([]byte(goldenLegacyDescriptor))
	if err != nil || !legacy.Legacy() || legacy != (Descriptor{LastIncludedSeq: 120, ProducerViewVersion: 3, CreatedAtMS: 1700000000123}) {
		t.Fatalf("legacy decode = %+v, %v", legacy, err)
	}
}

func TestManifestGolden(t *testing.T) {
	m := goldenManifestValue()
	enc, err := m.Encode()
	if err != nil || string(enc) != goldenManifest {
		t.Fatalf("Encode = %s, %v\nwant %s", enc, err, goldenManifest)
	}
	back, err := DecodeManifest([]byte(goldenManifest))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := back.Encode(); string(again) != goldenManifest {
		t.Fatalf("decoded manifest re-encodes to %s", again)
	}
	if err := AgreeManifest(goldenDescriptorValue(), back); err != nil {
		t.Fatal(err)
	}
	if err := AgreeHeader(goldenHeaderValue(), back); err != nil {
		t.Fatal(err)
	}
}

func TestEnvelopeHeaderGolden(t *testing.T) {
	h := goldenHeaderValue()
	b := h.Marshal()
	if got := hex.EncodeToString(b[:]); got != goldenEnvelopeHeader {
		t.Fatalf("Marshal = %s\nwant %s", got, goldenEnvelopeHeader)
	}
	back, err := ParseEnvelopeHeader(b[:])
	if err != nil || back != h {
		t.Fatalf("ParseEnvelopeHeader = %+v, %v", back, err)
	}
}

// Each refusal is of its documented kind.
func TestSnapshotRecordsRefused(t *testing.T) {
	header := func(mutate func(*EnvelopeHeader)) []byte {
		h := goldenHeaderValue()
		mutate(&h)
		b := h.Marshal()
		return b[:]
	}
	flip := func(i int) []byte {
		b := goldenHeaderValue().Marshal()
		b[i] ^= 1
		return b[:]
	}
	reserved := goldenHeaderValue().Marshal()
	reserved[14] = 1
	for name, c := range map[string]struct {
		err  error
		want error
	}{
		"descriptor schema 2": {
			decodeErr(DecodeDescriptor([]byte(strings.Replace(goldenDescriptor, `"schema_version": 1`,
				`"schema_version": 2`, 1)))), ErrSnapshotVersion},
		"descriptor unknown member":   {decodeErr(DecodeDescriptor([]byte(`{"snapshot_id":"x","bogus":1}`))), ErrSnapshotMalformed},
		"descriptor after the object": {decodeErr(DecodeDescriptor([]byte(goldenDescriptor + "{}"))), ErrSnapshotTrailing},
		"descriptor id of another batch": {
			decodeErr(DecodeDescriptor([]byte(strings.Replace(goldenDescriptor,
				`"last_included_batch_id": 42`, `"last_included_batch_id": 41`, 1)))),
			ErrSnapshotIdentity},
		"descriptor bad id": {decodeErr(DecodeDescriptor([]byte(strings.ReplaceAll(goldenDescriptor, "00112233445566aa", "x")))), ErrSnapshotID},
		"descriptor bad checksum": {
			decodeErr(DecodeDescriptor([]byte(strings.Replace(goldenDescriptor,
				"crc64nvme:AQIDBAUGBwg=", "deadbeef", 1)))), ErrChecksumTag},
		"descriptor md5":           {decodeErr(DecodeDescriptor([]byte(strings.Replace(goldenDescriptor, "crc64nvme:", "md5:", 1)))), ErrSnapshotVersion},
		"legacy two fields":        {decodeErr(DecodeDescriptor([]byte("1|2"))), ErrSnapshotMalformed},
		"legacy leading zero":      {decodeErr(DecodeDescriptor([]byte("01|2|3"))), ErrSnapshotMalformed},
		"legacy not a number":      {decodeErr(DecodeDescriptor([]byte("x|2|3"))), ErrSnapshotOverflow},
		"legacy time out of range": {decodeErr(DecodeDescriptor([]byte("1|2|99999999999999999999"))), ErrSnapshotOverflow},
		"manifest schema 2": {
			decodeErr(DecodeManifest([]byte(strings.Replace(goldenManifest, `"schema_version": 1`,
				`"schema_version": 2`, 1)))), ErrSnapshotVersion},
		"manifest count": {
			decodeErr(DecodeManifest([]byte(strings.Replace(goldenManifest, `"object_count": 5`,
				`"object_count": 6`, 1)))), ErrSnapshotCount},
		"manifest size": {
			decodeErr(DecodeManifest([]byte(strings.Replace(goldenManifest, `"payload_size": 1000`,
				`"payload_size": 1001`, 1)))), ErrSnapshotIdentity},
		"manifest chunk name": {
			decodeErr(DecodeManifest([]byte(strings.Replace(goldenManifest, "chunks/000001.bin",
				"chunks/000002.bin", 1)))), ErrSnapshotMalformed},
		"manifest cursor": {
			decodeErr(DecodeManifest([]byte(strings.Replace(goldenManifest, `"last_included_seq": 126`,
				`"last_included_seq": 0`, 1)))), ErrSnapshotCursor},
		"manifest trailing":       {decodeErr(DecodeManifest([]byte(goldenManifest + "[]"))), ErrSnapshotTrailing},
		"header short":            {headerErr(ParseEnvelopeHeader(make([]byte, EnvelopeHeaderSize-1))), ErrSnapshotTruncated},
		"header magic":            {headerErr(ParseEnvelopeHeader(flip(0))), ErrSnapshotMalformed},
		"header crc":              {headerErr(ParseEnvelopeHeader(flip(20))), ErrSnapshotChecksum},
		"header envelope version": {headerErr(ParseEnvelopeHeader(header(func(h *EnvelopeHeader) { h.EnvelopeSchemaVersion = 2 }))), ErrSnapshotVersion},
		"header codec version 1":  {headerErr(ParseEnvelopeHeader(header(func(h *EnvelopeHeader) { h.PayloadCodecVersion = 1 }))), ErrSnapshotVersion},
		"header reserved":         {headerErr(ParseEnvelopeHeader(fixCRC(reserved[:]))), ErrSnapshotMalformed},
		"header cursor":           {headerErr(ParseEnvelopeHeader(header(func(h *EnvelopeHeader) { h.Cursor.Seq = 0 }))), ErrSnapshotCursor},
		"header sizes": {
			headerErr(ParseEnvelopeHeader(
				header(func(h *EnvelopeHeader) { h.UncompressedSize = h.EncodedSize + 1 }))), ErrSnapshotMalformed},
		"header and manifest seq": {
			AgreeHeader(func() EnvelopeHeader { h := goldenHeaderValue(); h.Cursor.Seq++; return h }(), goldenManifestValue()), ErrSnapshotCursor},
		"header and manifest count": {
			AgreeHeader(func() EnvelopeHeader { h := goldenHeaderValue(); h.ChunkCount = 3; return h }(), goldenManifestValue()), ErrSnapshotCount},
		"descriptor and manifest": {AgreeManifest(func() Descriptor { d := goldenDescriptorValue(); d.ProducerViewVersion = 3; return d }(), goldenManifestValue()),
			ErrSnapshotIdentity},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", name, c.err, c.want)
		}
	}
}

func decodeErr[T any](_ T, err error) error { return err }

func headerErr(_ EnvelopeHeader, err error) error { return err }

// fixCRC recomputes a header's own CRC32C after an edit.
func fixCRC(b []byte) []byte {
	h := goldenHeaderValue().Marshal()
	copy(h[:68], b[:68])
	binary.LittleEndian.PutUint32(h[68:], crc32.Checksum(h[:68], crc32c))
	return h[:]
}

// memObjects is an object store in memory: the ObjectGetter of the tests.
type memObjects map[string][]byte

var errNoObject = errors.New("object not found")

func (m memObjects) GetObject(_ context.Context, key string) (io.ReadCloser, int64, error) {
	b, ok := m[key]
	if !ok {
		return nil, 0, errNoObject
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

// testSnapshot stores a snapshot whose payload bodies are arbitrary bytes
// (the chunk records are not the contract's to decode): a segments object
// with the envelope header, two chunks of 4 and 1 objects. edit changes
// the header before it is written; everything else is made to agree with it.
func testSnapshot(edit func(*EnvelopeHeader)) (memObjects, Pointer) {
	id := SnapshotID{BatchID: 42, Lease: 0x10, Random: "00112233445566aa"}
	prefix := "snaps/c1/" + id.String()
	bodies := [][]byte{bytes.Repeat([]byte("s"), 30), bytes.Repeat([]byte("c"), 40), []byte("0123456789")}
	all := bytes.Join(bodies, nil)
	h := EnvelopeHeader{EnvelopeSchemaVersion: EnvelopeSchemaVersion, PayloadCodecVersion: PayloadCodecVersion, Cursor: Cursor{BatchID: 42, Seq: 126},
		UncompressedSize: 50, EncodedSize: uint64(len(all)), Checksum: crc64nvme.Checksum(all), ObjectCount: 5, ChunkCount: 2}
	if edit != nil {
		edit(&h)
	}
	hb := h.Marshal()
	objects := [][]byte{append(hb[:], bodies[0]...), bodies[1], bodies[2]}
	m := Manifest{SchemaVersion: ManifestSchemaVersion, SnapshotID: id.String(), LastIncludedSeq: 126, LastIncludedBatchID: 42, ProducerViewVersion: 2,
		PayloadChecksum: CRC64NVME(h.Checksum), PayloadSize: int64(EnvelopeHeaderSize + len(all)), UncompressedSize: 50, ObjectCount: 5, ChunkObjects: 4}
	store := memObjects{}
	for i, b := range objects {
		e := ManifestEntry{Key: SegmentsObject, Objects: 2, Size: int64(len(b)), Checksum: CRC64NVME(crc64nvme.Checksum(b))}
		if i > 0 {
			e.Key, e.Objects = ChunkObject(i-1), []uint64{4, 1}[i-1]
			m.Chunks = append(m.Chunks, e)
		} else {
			m.Segments = e
		}
		store[path.Join(prefix, e.Key)] = b
	}
	d := Descriptor{SnapshotID: id.String(), SchemaVersion: DescriptorSchemaVersion, LastIncludedSeq: 126, LastIncludedBatchID: 42, ProducerViewVersion: 2,
		PayloadChecksum: m.PayloadChecksum, PayloadSize: uint64(m.PayloadSize), ManifestKey: path.Join(prefix, ManifestObject), ObjectPrefix: prefix, CreatedAtMS: 1}
	store[d.ManifestKey] = must(m.Encode())
	store[path.Join(prefix, DescriptorName)] = must(d.Encode())
	return store, d.Pointer()
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestOpenSnapshot(t *testing.T) {
	store, p := testSnapshot(nil)
	o, err := OpenSnapshot(context.Background(), store, p)
	if err != nil {
		t.Fatal(err)
	}
	if o.Descriptor.Pointer() != p || o.Header.ObjectCount != 5 || len(o.Manifest.Chunks) != 2 {
		t.Fatalf("opened %+v", o)
	}
}

// A snapshot broken anywhere is refused, with the object at fault named
// and the kind of the fault.
func TestOpenSnapshotRefusesDamage(t *testing.T) {
	_, p := testSnapshot(nil)
	key := func(name string) string { return path.Join(p.ObjectPrefix, name) }
	rewrite := func(name string, fn func([]byte) []byte) func(memObjects, *Pointer) {
		return func(s memObjects, _ *Pointer) { s[key(name)] = fn(append([]byte(nil), s[key(name)]...)) }
	}
	flip := func(i int) func([]byte) []byte { return func(b []byte) []byte { b[i] ^= 0x10; return b } }
	replace := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte { return []byte(strings.Replace(string(b), old, new, 1)) }
	}
	for _, c := range []struct {
		name   string
		header func(*EnvelopeHeader)
		damage func(memObjects, *Pointer)
		at     string
		want   error
	}{
		{name: "descriptor missing", damage: func(s memObjects, _ *Pointer) { delete(s, key(DescriptorName)) }, at: DescriptorName, want: errNoObject},
		{name: "descriptor garbage", damage: rewrite(DescriptorName, func([]byte) []byte { return []byte("{") }), at: DescriptorName, want: ErrSnapshotMalformed},
		{name: "descriptor legacy", damage: rewrite(DescriptorName, func([]byte) []byte { return []byte("126|2|1") }), at: DescriptorName, want: ErrSnapshotIdentity},
		{name: "descriptor elsewhere", damage: rewrite(DescriptorName, replace(`"object_prefix": "snaps/`, `"object_prefix": "other/`)),
			at: DescriptorName, want: ErrSnapshotMalformed},
		{name: "pointer disagrees", damage: func(_ memObjects, p *Pointer) { p.CreatedAtMS++ }, at: DescriptorName, want: ErrSnapshotIdentity},
		{name: "manifest missing", damage: func(s memObjects, _ *Pointer) { delete(s, key(ManifestObject)) }, at: ManifestObject, want: errNoObject},
		{name: "manifest garbage", damage: rewrite(ManifestObject, func(b []byte) []byte { return b[:len(b)/2] }), at: ManifestObject, want: ErrSnapshotMalformed},
		{name: "manifest disagrees", damage: rewrite(ManifestObject, replace(`"producer_view_version": 2`, `"producer_view_version": 3`)),
			at: ManifestObject, want: ErrSnapshotIdentity},
		{name: "chunk missing", damage: func(s memObjects, _ *Pointer) { delete(s, key(ChunkObject(1))) }, at: ChunkObject(1), want: errNoObject},
		{name: "chunk byte flipped", damage: rewrite(ChunkObject(0), flip(7)), at: ChunkObject(0), want: ErrSnapshotChecksum},
		{name: "chunk shorter", damage: rewrite(ChunkObject(1), func(b []byte) []byte { return b[1:] }), at: ChunkObject(1), want: ErrSnapshotIdentity},
		{name: "segments byte flipped", damage: rewrite(SegmentsObject, flip(EnvelopeHeaderSize+3)), at: SegmentsObject, want: ErrSnapshotChecksum},
		{name: "undamaged", header: func(h *EnvelopeHeader) {}},
		{name: "header cursor", header: func(h *EnvelopeHeader) { h.Cursor = Cursor{BatchID: 41, Seq: 126} }, at: SegmentsObject, want: ErrSnapshotCursor},
		{name: "header counts", header: func(h *EnvelopeHeader) { h.ObjectCount = 6 }, at: SegmentsObject, want: ErrSnapshotCount},
		{name: "header version", header: func(h *EnvelopeHeader) { h.PayloadCodecVersion = 1 }, at: SegmentsObject, want: ErrSnapshotVersion},
		{name: "header checksum", header: func(h *EnvelopeHeader) { h.Checksum ^= 1 }, at: SegmentsObject, want: ErrSnapshotChecksum},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, p := testSnapshot(c.header)
			if c.damage != nil {
				c.damage(store, &p)
			}
			_, err := OpenSnapshot(context.Background(), store, p)
			if c.want == nil {
				if err != nil {
					t.Fatalf("an undamaged snapshot: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), key(c.at)) {
				t.Fatalf("error %q does not name %s", err, key(c.at))
			}
		})
	}
}

// Streaming hands every payload byte to the writer in stream order.
func TestStreamSnapshotObjects(t *testing.T) {
	store, p := testSnapshot(nil)
	_, m, err := ReadSnapshotHead(context.Background(), store, p.ObjectPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := StreamSnapshotObjects(context.Background(), store, p.ObjectPrefix, m, &buf); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, e := range m.Entries() {
		want = append(want, store[path.Join(p.ObjectPrefix, e.Key)]...)
	}
	if !bytes.Equal(buf.Bytes(), want) || int64(buf.Len()) != m.PayloadSize {
		t.Fatalf("streamed %d bytes, want %d", buf.Len(), m.PayloadSize)
	}
	// A writer that fails does not hide a corrupt object behind its own
	// error: the object is hashed to its end and named.
	seg := path.Join(p.ObjectPrefix, SegmentsObject)
	store[seg][EnvelopeHeaderSize+3] ^= 1
	err = StreamSnapshotObjects(context.Background(), store, p.ObjectPrefix, m, failingWriter{})
	if !errors.Is(err, ErrSnapshotChecksum) || !strings.Contains(err.Error(), seg) {
		t.Fatalf("error %v, want the segments object's checksum", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("reader gone") }
