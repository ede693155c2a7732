package batchsnap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/internal/vectortest"
)

// dirGetter reads objects from a directory: the key is a path under it.
type dirGetter string

func (d dirGetter) GetObject(_ context.Context, key string) (io.ReadCloser, int64, error) {
	f, err := os.Open(filepath.Join(string(d), filepath.FromSlash(key)))
	if err != nil {
		return nil, 0, err
	}
	st, _ := f.Stat()
	return f, st.Size(), nil
}

// memGetter is an in-memory store.
type memGetter map[string][]byte

func (m memGetter) GetObject(_ context.Context, key string) (io.ReadCloser, int64, error) {
	b, ok := m[key]
	if !ok {
		return nil, 0, errors.New(key + ": not found")
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

type expectedDirectory struct {
	SnapshotID   string `json:"snapshot_id"`
	SnapshotRoot string `json:"snapshot_root"`
	Segments     []struct {
		SegmentName       string  `json:"segment_name"`
		SegmentNameB64    *string `json:"segment_name_b64"`
		TransportEndpoint string  `json:"transport_endpoint"`
		EndpointB64       *string `json:"transport_endpoint_b64"`
		Capacity          uint64  `json:"capacity"`
		IsMemorySegment   bool    `json:"is_memory_segment"`
		FilePath          string  `json:"file_path"`
		FilePathB64       *string `json:"file_path_b64"`
	} `json:"segments"`
	ObjectChunks []struct {
		ChunkIndex uint64       `json:"chunk_index"`
		Key        string       `json:"key"`
		Objects    []objectJSON `json:"objects"`
	} `json:"object_chunks"`
	Variants map[string]struct {
		Directory string `json:"directory"`
		Files     map[string]struct {
			Size   int64  `json:"size"`
			CRC32C uint32 `json:"crc32c"`
		} `json:"files"`
		Descriptor descriptorJSON `json:"descriptor"`
		Manifest   manifestJSON   `json:"manifest"`
	} `json:"variants"`
}

func readExpected(t *testing.T) expectedDirectory {
	raw, err := os.ReadFile(vectortest.Path("snapshot/directory/expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expectedDirectory
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestOpenUpstreamDirectory: the snapshot upstream's writer wrote, in both
// wire variants, opens by its descriptor key and reads back exactly the
// segments and objects upstream's capture held.
func TestOpenUpstreamDirectory(t *testing.T) {
	exp := readExpected(t)
	key := Artifacts(exp.SnapshotRoot, exp.SnapshotID).Descriptor()
	for name, variant := range exp.Variants {
		t.Run(name, func(t *testing.T) {
			g := dirGetter(vectortest.Path("snapshot/directory/" + variant.Directory))
			h, err := OpenHeadAt(context.Background(), g, key)
			if err != nil {
				t.Fatal(err)
			}
			if h.Descriptor != variant.Descriptor.descriptor() || !sameManifest(h.Manifest, variant.Manifest.manifest()) {
				t.Fatalf("head %+v", h)
			}
			var segs []SegmentInfo
			var chunks []ObjectChunk
			err = h.ReadContent(context.Background(), g, Visitor{
				Segments: func(s []SegmentInfo) error { segs = s; return nil },
				Chunk: func(c *ObjectChunk) error {
					kept := ObjectChunk{ChunkIndex: c.ChunkIndex, Objects: append([]ObjectEntry(nil), c.Objects...)}
					for i := range kept.Objects { // c's replica slices are reused: copy them
						kept.Objects[i].Metadata.Replicas = append([]metadata.ReplicaFields(nil), kept.Objects[i].Metadata.Replicas...)
					}
					chunks = append(chunks, kept)
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			var wantSegs []SegmentInfo
			for _, s := range exp.Segments {
				wantSegs = append(wantSegs, SegmentInfo{SegmentName: vectortest.String(t, &s.SegmentName, s.SegmentNameB64),
					TransportEndpoint: vectortest.String(t, &s.TransportEndpoint, s.EndpointB64), Capacity: s.Capacity,
					IsMemorySegment: s.IsMemorySegment, FilePath: vectortest.String(t, &s.FilePath, s.FilePathB64)})
			}
			if !equalJSON(segs, wantSegs) {
				t.Errorf("segments %+v, want %+v", segs, wantSegs)
			}
			if len(chunks) != len(exp.ObjectChunks) {
				t.Fatalf("%d chunks, want %d", len(chunks), len(exp.ObjectChunks))
			}
			for i, c := range exp.ObjectChunks {
				want := ObjectChunk{ChunkIndex: c.ChunkIndex}
				for _, o := range c.Objects {
					want.Objects = append(want.Objects, o.entry(t))
				}
				if !equalJSON(chunks[i], want) {
					t.Errorf("chunk %d: %+v, want %+v", i, chunks[i], want)
				}
			}
			for file, f := range variant.Files {
				data, err := os.ReadFile(filepath.Join(string(g), file))
				if err != nil || int64(len(data)) != f.Size || CRC32C(data) != f.CRC32C {
					t.Errorf("%s: %d bytes crc %08x, expected.json says %d %08x (%v)", file, len(data), CRC32C(data), f.Size, f.CRC32C, err)
				}
			}
		})
	}
}

// TestOpenRefusesDamage: a copy of upstream's snapshot damaged one way at a
// time is refused, naming the object and the reason, before anything
// unverified is decoded.
func TestOpenRefusesDamage(t *testing.T) {
	exp := readExpected(t)
	keys := Artifacts(exp.SnapshotRoot, exp.SnapshotID)
	dir := vectortest.Path("snapshot/directory/ndebug")
	pristine := memGetter{}
	for _, k := range []string{keys.Descriptor(), keys.Manifest(), keys.Segments(), keys.ObjectChunk(0), keys.ObjectChunk(1)} {
		b, err := os.ReadFile(filepath.Join(dir, k))
		if err != nil {
			t.Fatal(err)
		}
		pristine[k] = b
	}
	raw := pristine[keys.Descriptor()]
	d, err := DecodeDescriptor(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := PointerTo(d, keys.Descriptor(), raw)
	if _, err := Open(context.Background(), pristine, p); err != nil {
		t.Fatalf("pristine: %v", err)
	}
	clone := func() memGetter {
		m := memGetter{}
		for k, v := range pristine {
			m[k] = bytes.Clone(v)
		}
		return m
	}
	for _, c := range []struct {
		name   string
		damage func(m memGetter, p *Pointer)
		kind   error
		names  string
	}{
		{"descriptor flipped", func(m memGetter, _ *Pointer) { m[keys.Descriptor()][10] ^= 1 }, ErrChecksum, keys.Descriptor()},
		{"descriptor missing", func(m memGetter, _ *Pointer) { delete(m, keys.Descriptor()) }, nil, keys.Descriptor()},
		{"manifest flipped", func(m memGetter, _ *Pointer) { m[keys.Manifest()][20] ^= 1 }, ErrChecksum, keys.Manifest()},
		{"segments truncated", func(m memGetter, _ *Pointer) { m[keys.Segments()] = m[keys.Segments()][:10] }, ErrChecksum, keys.Segments()},
		{"chunk 1 flipped", func(m memGetter, _ *Pointer) { m[keys.ObjectChunk(1)][30] ^= 0x40 }, ErrChecksum, keys.ObjectChunk(1)},
		{"chunk 0 extra byte", func(m memGetter, _ *Pointer) { m[keys.ObjectChunk(0)] = append(m[keys.ObjectChunk(0)], 0) }, ErrChecksum, keys.ObjectChunk(0)},
		{"pointer names another view", func(_ memGetter, p *Pointer) { p.ProducerViewVersion++ }, ErrIdentity, keys.Descriptor()},
		{"pointer names another size", func(_ memGetter, p *Pointer) { p.DescriptorSize++ }, ErrChecksum, keys.Descriptor()},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, pp := clone(), p
			c.damage(m, &pp)
			_, err := Open(context.Background(), m, pp)
			if err == nil {
				t.Fatal("opened")
			}
			if c.kind != nil && !errors.Is(err, c.kind) {
				t.Errorf("%v is not %v", err, c.kind)
			}
			if !strings.Contains(err.Error(), c.names) {
				t.Errorf("%v does not name %s", err, c.names)
			}
		})
	}
}

func TestPointerRoundTrip(t *testing.T) {
	d := Descriptor{Identity: NewIdentity(ID{BatchID: 42, Lease: 7}, contract.Cursor{BatchID: 42, Seq: 1000}, 3),
		ManifestKey: "r/batch-oplog/42-7/manifest.json", ManifestSize: 531, ManifestCRC32C: 1, CreatedAtMS: 1767225600000}
	raw, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	p := PointerTo(d, Artifacts("r", "42-7").Descriptor(), raw)
	enc, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"pointer_schema_version":2,"snapshot_id":"42-7","last_included_seq":1000,"last_included_batch_id":42,` +
		`"producer_view_version":3,"descriptor_key":"r/batch-oplog/42-7/descriptor.json",` +
		`"descriptor_size":` + jsonNumber(uint32(len(raw))) + `,"descriptor_crc32c":` + jsonNumber(CRC32C(raw)) + `,"created_at_ms":1767225600000}`
	if string(enc) != want {
		t.Fatalf("pointer\n%s\nwant\n%s", enc, want)
	}
	back, err := DecodePointer(enc)
	if err != nil || back != p || back.Root() != "r" || back.ID() != (ID{42, 7}) {
		t.Fatalf("decoded %+v %v", back, err)
	}
	for name, bad := range map[string]string{
		"empty":         ``,
		"spaces":        strings.Replace(string(enc), ",", ", ", 1),
		"unknown":       strings.Replace(string(enc), `{`, `{"x":1,`, 1),
		"schema 1":      strings.Replace(string(enc), `"pointer_schema_version":2`, `"pointer_schema_version":1`, 1),
		"batch":         strings.Replace(string(enc), `"last_included_batch_id":42`, `"last_included_batch_id":43`, 1),
		"other key":     strings.Replace(string(enc), `r/batch-oplog/42-7/`, `r/batch-oplog/42-8/`, 1),
		"not the descr": strings.Replace(string(enc), `descriptor.json`, `manifest.json`, 1),
		"zero size":     strings.Replace(string(enc), `"descriptor_size":`+jsonNumber(uint32(len(raw))), `"descriptor_size":0`, 1),
	} {
		if _, err := DecodePointer([]byte(bad)); !errors.Is(err, ErrMalformedPointer) || !errors.Is(err, contract.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	v1 := strings.Replace(string(enc), `"pointer_schema_version":2`, `"pointer_schema_version":1`, 1)
	if _, err := DecodePointer([]byte(v1)); !errors.Is(err, contract.ErrVersion) {
		t.Errorf("schema 1: %v is not ErrVersion", err)
	}
}

func jsonNumber(v uint32) string { b, _ := json.Marshal(v); return string(b) }

// TestInspectEqualsExpected: the view Inspect builds of upstream's snapshot
// directory is expected.json's, member for member: the capture and
// writer arguments it shows, the decoded segments and objects (the same for
// both variants), and each variant's descriptor, manifest and files.
func TestInspectEqualsExpected(t *testing.T) {
	raw, err := os.ReadFile(vectortest.Path("snapshot/directory/expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&exp); err != nil {
		t.Fatal(err)
	}
	variants := exp["variants"].(map[string]any)
	for name, vv := range variants {
		t.Run(name, func(t *testing.T) {
			variant := vv.(map[string]any)
			g := dirGetter(vectortest.Path("snapshot/directory/" + variant["directory"].(string)))
			h, err := OpenHeadAt(context.Background(), g, Artifacts(exp["snapshot_root"].(string), exp["snapshot_id"].(string)).Descriptor())
			if err != nil {
				t.Fatal(err)
			}
			view, err := Inspect(context.Background(), g, h, nil)
			if err != nil {
				t.Fatal(err)
			}
			enc, _ := json.Marshal(view)
			var got map[string]any
			d := json.NewDecoder(bytes.NewReader(enc))
			d.UseNumber()
			if err := d.Decode(&got); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{}
			for k, v := range exp {
				if k != "variants" {
					want[k] = v
				}
			}
			for _, k := range []string{"descriptor", "manifest", "files"} {
				want[k] = variant[k]
			}
			if !equalJSON(got, want) {
				for k := range want {
					if !equalJSON(got[k], want[k]) {
						gj, _ := json.Marshal(got[k])
						wj, _ := json.Marshal(want[k])
						t.Errorf("%s:\n got %s\nwant %s", k, gj, wj)
					}
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("%s: not in expected.json", k)
					}
				}
			}
		})
	}
}
