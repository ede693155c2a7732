package batchsnap

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/internal/vectortest"
)

// seedMetadata adds every descriptor or manifest vector (good, bad and
// lenient) of the kind as a seed.
func seedMetadata(f *testing.F, good, bad string) {
	for _, v := range read[metadataVector[map[string]any]](f, good) {
		f.Add(vb64(f, v.ValueB64))
	}
	for _, v := range read[badMetadata](f, bad) {
		f.Add([]byte(vectortest.String(f, v.Value, v.ValueB64)))
	}
}

// FuzzDecodeDescriptor: no input panics; a refusal is typed; what decodes
// re-encodes to a value that decodes to the same descriptor.
func FuzzDecodeDescriptor(f *testing.F) {
	seedMetadata(f, "descriptors.jsonl", "bad-descriptors.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeDescriptor(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		enc, err := d.Encode()
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", d, err)
		}
		if back, err := DecodeDescriptor(enc); err != nil || back != d {
			t.Fatalf("re-encoded %s decodes to %+v, %v", enc, back, err)
		}
	})
}

// FuzzDecodeManifest: the same for the manifest.
func FuzzDecodeManifest(f *testing.F) {
	seedMetadata(f, "manifests.jsonl", "bad-manifests.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", m, err)
		}
		if back, err := DecodeManifest(enc); err != nil || !sameManifest(back, m) {
			t.Fatalf("re-encoded %s decodes to %+v, %v", enc, back, err)
		}
	})
}

// FuzzDecodeObjectChunk: no input panics; a refusal is typed; what decodes
// (with the index and count it holds) re-encodes to bytes that decode to
// the same chunk. (The bytes may differ: struct_pack's reader, like
// upstream's, takes lengths wider than a writer picks, a metainfo byte
// saying nothing, and a chunk of a writer from before hard_pinned; the
// vectors pin what a writer writes.)
func FuzzDecodeObjectChunk(f *testing.F) {
	for _, v := range read[binaryVector](f, "object-chunks.jsonl") {
		f.Add(vb64(f, v.BytesB64))
		f.Add(vb64(f, v.BytesB64TypeLiteral))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, index := range []uint64{0, 7} {
			c, err := DecodeObjectChunk(data, index, ^uint64(0))
			if err == nil {
				t.Fatalf("a chunk of 2^64-1 objects decoded")
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrCount) {
				t.Fatalf("untyped error: %v", err)
			}
			if errors.Is(err, ErrMalformed) {
				continue
			}
			c, err = DecodeObjectChunk(data, c.ChunkIndex, uint64(len(c.Objects)))
			if err != nil {
				t.Fatalf("decodes with its own index and count only sometimes: %v", err)
			}
			for _, enc := range []func(ObjectChunk) ([]byte, error){EncodeObjectChunk, EncodeObjectChunkTypeLiteral} {
				b, err := enc(c)
				if err != nil {
					t.Fatalf("decoded %+v does not encode: %v", c, err)
				}
				back, err := DecodeObjectChunk(b, c.ChunkIndex, uint64(len(c.Objects)))
				if err != nil || !equalJSON(back, c) {
					t.Fatalf("%x decodes to %+v, which encodes to %x, decoding to %+v, %v", data, c, b, back, err)
				}
			}
		}
	})
}

// FuzzDecodeSegments: the same for segments.bin.
func FuzzDecodeSegments(f *testing.F) {
	for _, v := range read[binaryVector](f, "segments.jsonl") {
		f.Add(vb64(f, v.BytesB64))
		f.Add(vb64(f, v.BytesB64TypeLiteral))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		segs, err := DecodeSegments(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for _, b := range [][]byte{EncodeSegments(segs), EncodeSegmentsTypeLiteral(segs)} {
			if back, err := DecodeSegments(b); err != nil || !equalJSON(back, segs) {
				t.Fatalf("%x decodes to %+v, which encodes to %x, decoding to %+v, %v", data, segs, b, back, err)
			}
		}
	})
}

// FuzzDecodePointer: what decodes is exactly its encoding; a refusal is
// ErrMalformedPointer.
func FuzzDecodePointer(f *testing.F) {
	d := Descriptor{Identity: NewIdentity(ID{BatchID: 42, Lease: 7}, contract.Cursor{BatchID: 42, Seq: 1000}, 3),
		ManifestKey: "r/batch-oplog/42-7/manifest.json", ManifestSize: 531, ManifestCRC32C: 1, CreatedAtMS: 1767225600000}
	raw, _ := d.Encode()
	enc, _ := PointerTo(d, Artifacts("r", "42-7").Descriptor(), raw).Encode()
	f.Add(enc)
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePointer(data)
		if err != nil {
			if !errors.Is(err, ErrMalformedPointer) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if enc, err := p.Encode(); err != nil || !bytes.Equal(enc, data) {
			t.Fatalf("accepted %q, which encodes to %q, %v", data, enc, err)
		}
	})
}

// FuzzOpen: upstream's snapshot with one object replaced by arbitrary
// bytes never opens unless the bytes are the object's own, and every
// refusal names an object.
func FuzzOpen(f *testing.F) {
	dir := vectortest.Path("snapshot/directory/ndebug")
	keys := Artifacts("snapshots", "42-7")
	objects := []string{keys.Descriptor(), keys.Manifest(), keys.Segments(), keys.ObjectChunk(0), keys.ObjectChunk(1)}
	pristine := memGetter{}
	for _, k := range objects {
		b, err := os.ReadFile(filepath.Join(dir, k))
		if err != nil {
			f.Fatal(err)
		}
		pristine[k] = b
	}
	d, _ := DecodeDescriptor(pristine[keys.Descriptor()])
	p := PointerTo(d, keys.Descriptor(), pristine[keys.Descriptor()])
	for i, k := range objects {
		f.Add(uint8(i), pristine[k])
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		k := objects[int(which)%len(objects)]
		m := memGetter{}
		for kk, v := range pristine {
			m[kk] = v
		}
		m[k] = data
		_, err := Open(context.Background(), m, p)
		if bytes.Equal(data, pristine[k]) {
			if err != nil {
				t.Fatalf("the pristine snapshot does not open: %v", err)
			}
			return
		}
		if err == nil {
			t.Fatalf("%s replaced by %x opened", k, data)
		}
		if !bytes.Contains([]byte(err.Error()), []byte(k)) && !bytes.Contains([]byte(err.Error()), []byte("object chunk")) {
			t.Fatalf("%v names no object", err)
		}
	})
}
