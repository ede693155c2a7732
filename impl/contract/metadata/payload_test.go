package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/internal/vectortest"
	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// Conversion of payloads.jsonl "fields" into the Go types.

type fieldReader struct {
	t testing.TB
	m map[string]any
}

func (f fieldReader) sub(key string) fieldReader {
	m, ok := f.m[key].(map[string]any)
	if !ok {
		f.t.Fatalf("field %q is not an object: %v", key, f.m[key])
	}
	return fieldReader{f.t, m}
}

func (f fieldReader) isNull(key string) bool {
	v, ok := f.m[key]
	return !ok || v == nil
}

func (f fieldReader) str(key string) string {
	if b, ok := f.m[key+"_b64"].(string); ok {
		return string(mustB64(f.t, b))
	}
	s, ok := f.m[key].(string)
	if !ok {
		f.t.Fatalf("field %q is not a string: %v", key, f.m[key])
	}
	return s
}

func parseNumber(t testing.TB, v any, bits int, signed bool) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("not a number: %v", v)
	}
	if signed {
		i, err := strconv.ParseInt(n.String(), 10, bits)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	u, err := strconv.ParseUint(n.String(), 10, bits)
	if err != nil {
		t.Fatal(err)
	}
	return int64(u)
}

func (f fieldReader) u64(key string) uint64 { return uint64(parseNumber(f.t, f.m[key], 64, false)) }
func (f fieldReader) i32(key string) int32  { return int32(parseNumber(f.t, f.m[key], 32, true)) }
func (f fieldReader) u8(key string) uint8   { return uint8(parseNumber(f.t, f.m[key], 8, false)) }

func (f fieldReader) boolean(key string) bool {
	b, ok := f.m[key].(bool)
	if !ok {
		f.t.Fatalf("field %q is not a bool: %v", key, f.m[key])
	}
	return b
}

func (f fieldReader) uuid(key string) UUID {
	a, ok := f.m[key].([]any)
	if !ok || len(a) != 2 {
		f.t.Fatalf("field %q is not a pair: %v", key, f.m[key])
	}
	return UUID{uint64(parseNumber(f.t, a[0], 64, false)), uint64(parseNumber(f.t, a[1], 64, false))}
}

func (f fieldReader) buffer() BufferDescriptor {
	b := f.sub("buffer_descriptor")
	return BufferDescriptor{
		Size:              b.u64("size_"),
		BufferAddress:     b.u64("buffer_address_"),
		Protocol:          b.str("protocol_"),
		TransportEndpoint: b.str("transport_endpoint_"),
	}
}

func metadataFromFields(t testing.TB, fields map[string]any) MetadataPayload {
	f := fieldReader{t, fields}
	p := MetadataPayload{ClientID: f.uuid("client_id"), Size: f.u64("size")}
	reps, ok := fields["replicas"].([]any)
	if !ok {
		t.Fatalf("replicas: %v", fields["replicas"])
	}
	for _, r := range reps {
		rf := fieldReader{t, r.(map[string]any)}
		dv := rf.sub("descriptor_variant")
		var v ReplicaVariant
		switch idx := dv.u8("index"); idx {
		case 0:
			v = MemoryDescriptor{Buffer: dv.buffer()}
		case 1:
			v = NoFDescriptor{Buffer: dv.buffer()}
		case 2:
			v = DiskDescriptor{FilePath: dv.str("file_path"), ObjectSize: dv.u64("object_size")}
		case 3:
			v = LocalDiskDescriptor{ClientID: dv.uuid("client_id"), ObjectSize: dv.u64("object_size"),
				TransportEndpoint: dv.str("transport_endpoint")}
		case 4:
			v = DistributedFSDescriptor{FilePath: dv.str("file_path"), Offset: dv.u64("offset"),
				ObjectSize: dv.u64("object_size"), AlignedSize: dv.u64("aligned_size"), ShardIdx: dv.i32("shard_idx")}
		default:
			t.Fatalf("variant index %d", idx)
		}
		p.Replicas = append(p.Replicas, ReplicaDescriptor{ID: rf.u64("id"), Variant: v, Status: ReplicaStatus(rf.i32("status"))})
	}
	if !f.isNull("group_id") {
		s := f.str("group_id")
		p.GroupID = &s
	}
	if !f.isNull("data_type") {
		d := ObjectDataType(f.u8("data_type"))
		p.DataType = &d
	}
	if !f.isNull("hard_pinned") {
		b := f.boolean("hard_pinned")
		p.HardPinned = &b
	}
	return p
}

func mountFromFields(t testing.TB, fields map[string]any) SegmentMountOp {
	f := fieldReader{t, fields}
	return SegmentMountOp{
		SegmentName:       f.str("segment_name"),
		TransportEndpoint: f.str("transport_endpoint"),
		Capacity:          f.u64("capacity"),
		IsMemorySegment:   f.boolean("is_memory_segment"),
		FilePath:          f.str("file_path"),
	}
}

// payloadCodec is one payload type's codec, value-typed for table tests.
type payloadCodec struct {
	op         batchlog.OpType
	encode     func(v any) ([]byte, error)
	encodeLit  func(v any) ([]byte, error)
	decode     func(b []byte) (any, error)
	fromFields func(t testing.TB, fields map[string]any) any
}

var payloadCodecs = map[string]payloadCodec{
	"MetadataPayload": {
		op:         batchlog.OpPutEnd,
		encode:     func(v any) ([]byte, error) { return EncodeMetadataPayload(v.(MetadataPayload)) },
		encodeLit:  func(v any) ([]byte, error) { return EncodeMetadataPayloadTypeLiteral(v.(MetadataPayload)) },
		decode:     func(b []byte) (any, error) { return DecodeMetadataPayload(b) },
		fromFields: func(t testing.TB, f map[string]any) any { return metadataFromFields(t, f) },
	},
	"SegmentMountOp": {
		op:         batchlog.OpSegmentMount,
		encode:     func(v any) ([]byte, error) { return EncodeSegmentMountOp(v.(SegmentMountOp)), nil },
		encodeLit:  func(v any) ([]byte, error) { return EncodeSegmentMountOpTypeLiteral(v.(SegmentMountOp)), nil },
		decode:     func(b []byte) (any, error) { return DecodeSegmentMountOp(b) },
		fromFields: func(t testing.TB, f map[string]any) any { return mountFromFields(t, f) },
	},
	"SegmentUpdateOp": {
		op:         batchlog.OpSegmentUpdate,
		encode:     func(v any) ([]byte, error) { return EncodeSegmentUpdateOp(v.(SegmentUpdateOp)), nil },
		encodeLit:  func(v any) ([]byte, error) { return EncodeSegmentUpdateOpTypeLiteral(v.(SegmentUpdateOp)), nil },
		decode:     func(b []byte) (any, error) { return DecodeSegmentUpdateOp(b) },
		fromFields: func(t testing.TB, f map[string]any) any { return SegmentUpdateOp(mountFromFields(t, f)) },
	},
	"SegmentUnmountOp": {
		op:        batchlog.OpSegmentUnmount,
		encode:    func(v any) ([]byte, error) { return EncodeSegmentUnmountOp(v.(SegmentUnmountOp)), nil },
		encodeLit: func(v any) ([]byte, error) { return EncodeSegmentUnmountOpTypeLiteral(v.(SegmentUnmountOp)), nil },
		decode:    func(b []byte) (any, error) { return DecodeSegmentUnmountOp(b) },
		fromFields: func(t testing.TB, f map[string]any) any {
			return SegmentUnmountOp{TransportEndpoint: fieldReader{t, f}.str("transport_endpoint")}
		},
	},
}

// codecFor is the codec of a vector's type; "MetadataPayload(<hash> field
// set)" is an older MetadataPayload, read with the current one.
func codecFor(t testing.TB, v payloadVector) (payloadCodec, bool) {
	t.Helper()
	name, old := v.Type, false
	if i := strings.IndexByte(name, '('); i >= 0 {
		name, old = name[:i], true
	}
	c, ok := payloadCodecs[name]
	if !ok {
		t.Fatalf("unknown payload type %q", v.Type)
	}
	if c.op != batchlog.OpType(v.OpType) {
		t.Fatalf("type %s rides in op %d, vector says %d", name, c.op, v.OpType)
	}
	return c, old
}

// TestPayloadVectors: each payload encodes to upstream's bytes in both
// builds' variants, and both byte strings decode to the vector's fields.
// The older writers' payloads are decoded only (the current type writes the
// compatible fields they lack).
func TestPayloadVectors(t *testing.T) {
	vs := readVectors[payloadVector](t, "payloads.jsonl")
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			c, old := codecFor(t, v)
			want := c.fromFields(t, v.Fields)
			nd, lit := mustB64(t, v.BytesB64), mustB64(t, v.BytesB64TypeLiteral)
			if !old {
				got, err := c.encode(want)
				if err != nil || !bytes.Equal(got, nd) {
					t.Fatalf("encode (NDEBUG): %v\n got %x\nwant %x", err, head(got), head(nd))
				}
				got, err = c.encodeLit(want)
				if err != nil || !bytes.Equal(got, lit) {
					t.Fatalf("encode (type literal): %v\n got %x\nwant %x", err, head(got), head(lit))
				}
			}
			for variant, b := range map[string][]byte{"bytes_b64": nd, "bytes_b64_type_literal": lit} {
				got, err := c.decode(b)
				if err != nil {
					t.Fatalf("decode %s: %v", variant, err)
				}
				if !samePayload(got, want) {
					t.Fatalf("decode %s:\n got %+v\nwant %+v", variant, got, want)
				}
			}
		})
	}
	t.Logf("%d payloads.jsonl vectors", len(vs))
}

func samePayload(a, b any) bool {
	if x, ok := a.(MetadataPayload); ok {
		y := b.(MetadataPayload)
		if len(x.Replicas) == 0 && len(y.Replicas) == 0 {
			x.Replicas, y.Replicas = nil, nil
		}
		return reflect.DeepEqual(x, y)
	}
	return reflect.DeepEqual(a, b)
}

func head(b []byte) []byte {
	if len(b) > 96 {
		return b[:96]
	}
	return b
}

// TestBatchPayloadsDecode: the payloads inside the batch vectors (both
// builds) decode with the codec of their entry's op type.
func TestBatchPayloadsDecode(t *testing.T) {
	n := 0
	for _, v := range readVectors[batchEntries](t, "batches.jsonl") {
		if strings.HasPrefix(v.Name, "payload_") {
			continue // arbitrary bytes that exercise the record's base64, not a payload
		}
		for i, ve := range v.Input.Entries {
			e := struct {
				Op      batchlog.OpType
				Payload []byte
			}{batchlog.OpType(ve.OpType), mustB64(t, ve.PayloadB64)}
			var err error
			switch e.Op {
			case batchlog.OpPutEnd:
				if len(e.Payload) == 0 {
					continue // upstream's applier stores empty metadata
				}
				_, err = DecodeMetadataPayload(e.Payload)
			case batchlog.OpSegmentMount:
				_, err = DecodeSegmentMountOp(e.Payload)
			case batchlog.OpSegmentUnmount:
				_, err = DecodeSegmentUnmountOp(e.Payload)
			case batchlog.OpSegmentUpdate:
				_, err = DecodeSegmentUpdateOp(e.Payload)
			default:
				if len(e.Payload) != 0 {
					t.Errorf("%s entry %d: op %v with a payload", v.Name, i, e.Op)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s entry %d (%v): %v", v.Name, i, e.Op, err)
			}
			n++
		}
	}
	t.Logf("%d payloads inside batch vectors decoded", n)
}

func TestPayloadTypeHashes(t *testing.T) {
	// The hashes the vectors carry, from MD5 of the type literals.
	for _, c := range []struct {
		typ  *structpack.Type
		want uint32
	}{
		{metadataPayloadType, 0xc04738c2},
		{segmentMountType, 0x7b470444},
		{segmentUpdateType, 0x7b470444},
		{segmentUnmountType, 0x3c785b6a},
	} {
		if c.typ.Hash() != c.want {
			t.Errorf("%s hash %08x, want %08x", c.typ.Name(), c.typ.Hash(), c.want)
		}
	}
	// Mount and update bytes are interchangeable; unmount bytes are not a mount.
	mount := EncodeSegmentMountOp(SegmentMountOp{SegmentName: "s", TransportEndpoint: "e", Capacity: 1})
	if op, err := DecodeSegmentUpdateOp(mount); err != nil || op.SegmentName != "s" {
		t.Errorf("mount bytes as update: %+v %v", op, err)
	}
	if _, err := DecodeSegmentMountOp(EncodeSegmentUnmountOp(SegmentUnmountOp{TransportEndpoint: "e"})); !errors.Is(err, contract.ErrTypeHash) {
		t.Errorf("unmount bytes as mount: %v", err)
	}
	if _, err := DecodeMetadataPayload(mount); !errors.Is(err, contract.ErrTypeHash) {
		t.Errorf("mount bytes as metadata: %v", err)
	}
}

// TestPayloadBadInput: truncations, trailing bytes and corrupted headers of
// every vector are errors, never panics, and never a silent success.
func TestPayloadBadInput(t *testing.T) {
	vs := readVectors[payloadVector](t, "payloads.jsonl")
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			c, _ := codecFor(t, v)
			for _, b := range [][]byte{mustB64(t, v.BytesB64), mustB64(t, v.BytesB64TypeLiteral)} {
				for n := 0; n < len(b); n++ {
					if n > 600 && len(b)-n > 600 && n%997 != 0 {
						continue
					}
					if _, err := c.decode(b[:n]); err == nil {
						t.Fatalf("truncated to %d of %d bytes: accepted", n, len(b))
					}
				}
				if _, err := c.decode(append(bytes.Clone(b), 0)); !errors.Is(err, contract.ErrMalformed) {
					t.Fatalf("trailing byte: %v", err)
				}
				bad := bytes.Clone(b)
				bad[2] ^= 0x40
				if _, err := c.decode(bad); !errors.Is(err, contract.ErrTypeHash) {
					t.Fatalf("corrupted hash: %v", err)
				}
				bad = bytes.Clone(b)
				bad[0] ^= 1 // metainfo flag flipped: the header is misread
				if _, err := c.decode(bad); err == nil {
					t.Fatalf("flipped metainfo flag: accepted")
				}
				if b[0]&1 != 0 {
					bad = bytes.Clone(b)
					bad[4] |= 0x20
					if _, err := c.decode(bad); !errors.Is(err, contract.ErrMalformed) {
						t.Fatalf("unknown metainfo bit: %v", err)
					}
				}
			}
		})
	}
}

func TestPayloadCorruptFields(t *testing.T) {
	meta := MetadataPayload{Replicas: []ReplicaDescriptor{{ID: 1, Variant: DiskDescriptor{FilePath: "p"}, Status: ReplicaComplete}}}
	b, err := EncodeMetadataPayload(meta)
	if err != nil {
		t.Fatal(err)
	}
	// Header: hash(4) metainfo(1) compatible length(2); body: client_id(16)
	// size(8) count(1) id(8) variant index at 40.
	if b[40] != 2 {
		t.Fatalf("variant index not at byte 40: % x", b)
	}
	bad := bytes.Clone(b)
	bad[40] = 5
	if _, err := DecodeMetadataPayload(bad); !errors.Is(err, contract.ErrMalformed) {
		t.Errorf("variant index 5: %v", err)
	}
	bad = bytes.Clone(b)
	bad[39-8] = 0xff // replica count 255 with one replica's bytes
	if _, err := DecodeMetadataPayload(bad); !errors.Is(err, contract.ErrMalformed) {
		t.Errorf("overlong vector: %v", err)
	}
	bad = bytes.Clone(b)
	bad[5]++ // compatible length off by one
	if _, err := DecodeMetadataPayload(bad); !errors.Is(err, contract.ErrMalformed) {
		t.Errorf("compatible length mismatch: %v", err)
	}
	bad = bytes.Clone(b)
	bad[len(bad)-1] = 2 // hard_pinned has-value byte 2
	if _, err := DecodeMetadataPayload(bad); !errors.Is(err, contract.ErrMalformed) {
		t.Errorf("bool 2: %v", err)
	}
	if _, err := EncodeMetadataPayload(MetadataPayload{Replicas: []ReplicaDescriptor{{ID: 1}}}); !errors.Is(err, contract.ErrMalformed) {
		t.Errorf("nil variant encoded: %v", err)
	}

	mount := EncodeSegmentMountOp(SegmentMountOp{SegmentName: "s", TransportEndpoint: "e", Capacity: 1})
	// hash(4) "s"(2) "e"(2) capacity(8) is_memory_segment at 16.
	bad = bytes.Clone(mount)
	bad[16] = 2
	if _, err := DecodeSegmentMountOp(bad); !errors.Is(err, contract.ErrMalformed) {
		t.Errorf("bool 2: %v", err)
	}
	bad = bytes.Clone(mount)
	bad[4] = 0xff // segment name of 255 bytes
	if _, err := DecodeSegmentMountOp(bad); !errors.Is(err, contract.ErrMalformed) {
		t.Errorf("overlong string: %v", err)
	}
	// A compatible length on a type without compatible fields.
	withMeta := append([]byte{mount[0] | 1, mount[1], mount[2], mount[3], 0b01, byte(len(mount) + 3), 0}, mount[4:]...)
	if _, err := DecodeSegmentMountOp(withMeta); !errors.Is(err, contract.ErrMalformed) {
		t.Errorf("compatible length on SegmentMountOp: %v", err)
	}
	// Wider lengths than needed are valid struct_pack (metainfo says 2 bytes).
	wide := append([]byte{mount[0] | 1, mount[1], mount[2], mount[3], 0b01000, 1, 0, 's', 1, 0, 'e'}, mount[8:16]...)
	wide = append(wide, 0, 0, 0)
	if op, err := DecodeSegmentMountOp(wide); err != nil || op.SegmentName != "s" || op.Capacity != 1 {
		t.Errorf("2-byte lengths: %+v %v", op, err)
	}
}

// TestPayloadWidths: container lengths widen together, for the largest
// container anywhere in the payload.
func TestPayloadWidths(t *testing.T) {
	for _, c := range []struct {
		n    int
		meta byte // metainfo byte, or 0 when none is written
	}{{255, 0}, {256, 0b01000}, {65535, 0b01000}, {65536, 0b10000}} {
		b := EncodeSegmentUnmountOp(SegmentUnmountOp{TransportEndpoint: strings.Repeat("e", c.n)})
		switch {
		case c.meta == 0 && b[0]&1 != 0, c.meta != 0 && (b[0]&1 == 0 || b[4] != c.meta):
			t.Errorf("len %d: header % x", c.n, b[:6])
		}
		if op, err := DecodeSegmentUnmountOp(b); err != nil || len(op.TransportEndpoint) != c.n {
			t.Errorf("len %d: %v", c.n, err)
		}
	}
}

type payloadVector struct {
	Name                string         `json:"name"`
	Type                string         `json:"type"`
	OpType              uint8          `json:"op_type"`
	Fields              map[string]any `json:"fields"`
	BytesB64            string         `json:"bytes_b64"`
	BytesB64TypeLiteral string         `json:"bytes_b64_type_literal"`
}

// batchEntries is the part of a batches.jsonl line the payload tests read.
type batchEntries struct {
	Name  string `json:"name"`
	Input struct {
		Entries []struct {
			OpType     uint8  `json:"op_type"`
			PayloadB64 string `json:"payload_b64"`
		} `json:"entries"`
	} `json:"input"`
}

func readVectors[T any](t testing.TB, file string) []T { return vectortest.Read[T](t, file) }

func mustB64(t testing.TB, s string) []byte { return vectortest.B64(t, s) }
