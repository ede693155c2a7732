package legacy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore"
)

// memStore serves a fixed set of objects by exact key (reads only).
type memStore map[string][]byte

func (m memStore) PutIfAbsent(context.Context, string, io.ReaderAt, int64, uint64) error {
	return errors.New("read only")
}
func (m memStore) Head(_ context.Context, key string) (objstore.Info, error) {
	d, ok := m[key]
	if !ok {
		return objstore.Info{}, objstore.ErrNotFound
	}
	return objstore.Info{Key: key, Size: int64(len(d))}, nil
}
func (m memStore) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Info, error) {
	info, err := m.Head(ctx, key)
	if err != nil {
		return nil, info, err
	}
	return io.NopCloser(bytes.NewReader(m[key])), info, nil
}
func (m memStore) List(context.Context, string) ([]objstore.Info, error) { return nil, nil }
func (m memStore) Delete(context.Context, []string) error                { return nil }
func (m memStore) Name() string                                          { return "mem" }

// FuzzOpen feeds arbitrary bytes as the metadata, segments and descriptor of
// an otherwise valid snapshot: the reader returns a state or one of its
// typed errors, and never panics or runs away with memory.
func FuzzOpen(f *testing.F) {
	const id = "20260620_143012_007"
	dir := filepath.Join(fixtures, "small", "mooncake_cluster", id)
	files := map[string][]byte{}
	for _, name := range []string{legacy.MetadataObject, legacy.SegmentsObject, legacy.DescriptorObject, legacy.ManifestObject} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		files[name] = data
	}
	f.Add(files[legacy.MetadataObject], files[legacy.SegmentsObject], files[legacy.DescriptorObject])
	f.Add(files[legacy.MetadataObject][:100], []byte{0x80}, []byte("0|0|1"))
	typed := []error{legacy.ErrNotFound, legacy.ErrID, legacy.ErrDescriptor, legacy.ErrManifest, legacy.ErrTruncated, legacy.ErrMalformed, legacy.ErrContent}
	f.Fuzz(func(t *testing.T, metadata, segments, descriptor []byte) {
		st := memStore{
			"c/" + id + "/" + legacy.MetadataObject:   metadata,
			"c/" + id + "/" + legacy.SegmentsObject:   segments,
			"c/" + id + "/" + legacy.DescriptorObject: descriptor,
			"c/" + id + "/" + legacy.ManifestObject:   files[legacy.ManifestObject],
		}
		snap, err := legacy.Source{Store: st}.Open(context.Background(), "c", id)
		if err == nil {
			if snap.State == nil || !snap.State.Cursor().Consistent() {
				t.Fatalf("accepted without a consistent state")
			}
			return
		}
		for _, e := range typed {
			if errors.Is(err, e) {
				return
			}
		}
		t.Fatalf("untyped error: %v", err)
	})
}

// FuzzDecodeMarker: the import record decoder never panics and never
// accepts a record without a legacy id and a batch-1 cursor.
func FuzzDecodeMarker(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"legacy_snapshot_id":"20260620_143012_007","batch_id":1,"last_seq":5}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := legacy.DecodeMarker(data)
		if err != nil {
			return
		}
		if m.BatchID != 1 || m.LastSeq == 0 || legacy.CheckID(m.LegacySnapshotID) != nil {
			t.Fatalf("accepted %+v", m)
		}
	})
}
