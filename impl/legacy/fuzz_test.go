package legacy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore"
)

// memStore serves a fixed set of objects by exact key (reads only).
type memStore map[string][]byte

func (m memStore) PutIfAbsent(context.Context, string, io.ReaderAt, int64, uint32) error {
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

var typedErrors = []error{legacy.ErrNotFound, legacy.ErrID, legacy.ErrDescriptor, legacy.ErrManifest, legacy.ErrTruncated,
	legacy.ErrMalformed, legacy.ErrContent, legacy.ErrNotImportable}

func typed(err error) bool {
	for _, e := range typedErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// vectorFiles reads the payload files of an upstream vector.
func vectorFiles(f *testing.F, name string) map[string][]byte {
	dir := filepath.Join(vectors, name, legacy.SnapshotRootBase, "mooncake_cluster")
	id, err := os.ReadFile(filepath.Join(dir, legacy.LatestObject))
	if err != nil {
		f.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range []string{legacy.MetadataObject, legacy.SegmentsObject, legacy.TaskManagerObject} {
		data, err := os.ReadFile(filepath.Join(dir, string(id), n))
		if err != nil {
			f.Fatal(err)
		}
		files[n] = data
	}
	return files
}

// readFuzzed reads one snapshot whose three payload files are given, with a
// valid descriptor and manifest, and converts it.
func readFuzzed(metadata, segments, tasks []byte) (*legacy.Snapshot, error) {
	const id = "20260101_000000_002"
	p := "r/" + legacy.SnapshotRootBase + "/c/" + id + "/"
	st := memStore{p + legacy.DescriptorObject: []byte("0|0|1"), p + legacy.ManifestObject: []byte(legacysnap.ManifestFor(id)),
		p + legacy.MetadataObject: metadata, p + legacy.SegmentsObject: segments, p + legacy.TaskManagerObject: tasks}
	snap, err := legacy.Source{Store: st, Root: "r"}.Read(context.Background(), "c", id)
	if err != nil {
		return nil, err
	}
	return snap, snap.Convert()
}

// FuzzOpen feeds arbitrary bytes as the metadata, segments and task_manager
// of a snapshot, seeded with the upstream vectors: the reader returns a
// snapshot or one of its typed errors (the reader alone: legacysnap's
// FuzzRead), never panics, never runs away with
// memory, and a snapshot it converts holds a consistent state and every
// object upstream's decoder keeps.
func FuzzOpen(f *testing.F) {
	for _, name := range vectorNames {
		if name == "many" {
			continue // its 390 KB of metadata slow every execution down
		}
		v := vectorFiles(f, name)
		f.Add(v[legacy.MetadataObject], v[legacy.SegmentsObject], v[legacy.TaskManagerObject])
	}
	small := vectorFiles(f, "small")
	f.Add(small[legacy.MetadataObject][:100], small[legacy.SegmentsObject], small[legacy.TaskManagerObject])
	f.Fuzz(func(t *testing.T, metadata, segments, tasks []byte) {
		snap, err := readFuzzed(metadata, segments, tasks)
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		n, _ := snap.State.Len()
		if !snap.State.Cursor().Consistent() || n != len(snap.Decoded.Objects) || len(snap.Decoded.Skipped) > 0 {
			t.Fatalf("converted %d of %d objects (%d skipped)", n, len(snap.Decoded.Objects), len(snap.Decoded.Skipped))
		}
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
