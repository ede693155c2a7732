package legacysnap_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

// vectorFiles reads the payload files of an upstream vector.
func vectorFiles(f *testing.F, name string) map[string][]byte {
	dir := filepath.Join(vectors, name, legacysnap.SnapshotRootBase, "mooncake_cluster")
	id, err := os.ReadFile(filepath.Join(dir, legacysnap.LatestObject))
	if err != nil {
		f.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range []string{legacysnap.MetadataObject, legacysnap.SegmentsObject, legacysnap.TaskManagerObject} {
		data, err := os.ReadFile(filepath.Join(dir, string(id), n))
		if err != nil {
			f.Fatal(err)
		}
		files[n] = data
	}
	return files
}

// readFuzzed reads one snapshot whose three payload files are given, with a
// valid descriptor and manifest.
func readFuzzed(metadata, segments, tasks []byte) (*legacysnap.Snapshot, error) {
	const id = "20260101_000000_002"
	p := "r/" + legacysnap.SnapshotRootBase + "/c/" + id + "/"
	st := memStore{p + legacysnap.DescriptorObject: []byte("0|0|1"), p + legacysnap.ManifestObject: []byte(legacysnap.ManifestFor(id)),
		p + legacysnap.MetadataObject: metadata, p + legacysnap.SegmentsObject: segments, p + legacysnap.TaskManagerObject: tasks}
	return legacysnap.Source{Store: st, Root: "r"}.Read(context.Background(), "c", id)
}

// FuzzRead feeds arbitrary bytes as the metadata, segments and task_manager
// of a snapshot, seeded with the upstream vectors: the reader returns a
// snapshot or one of its typed errors, never panics, never runs away with
// memory, and what it decodes is in (tenant, key) order with every memory
// replica of a kept object on a segment upstream can allocate on.
func FuzzRead(f *testing.F) {
	for _, name := range vectorNames {
		if name == "many" {
			continue // its 390 KB of metadata slow every execution down
		}
		v := vectorFiles(f, name)
		f.Add(v[legacysnap.MetadataObject], v[legacysnap.SegmentsObject], v[legacysnap.TaskManagerObject])
	}
	small := vectorFiles(f, "small")
	f.Add(small[legacysnap.MetadataObject][:100], small[legacysnap.SegmentsObject], small[legacysnap.TaskManagerObject])
	f.Fuzz(func(t *testing.T, metadata, segments, tasks []byte) {
		snap, err := readFuzzed(metadata, segments, tasks)
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		d := snap.Decoded
		for i, o := range d.Objects {
			if i > 0 {
				p := d.Objects[i-1]
				if p.Tenant > o.Tenant || (p.Tenant == o.Tenant && p.Key >= o.Key) {
					t.Fatalf("objects %d and %d out of order", i-1, i)
				}
			}
			for _, r := range o.Replicas {
				if r.Memory == nil {
					continue
				}
				s, ok := d.SegmentByID(r.Memory.Segment)
				if !ok || s.Status != legacysnap.SegmentOK || s.Allocator == nil {
					t.Fatalf("object %d kept with a memory replica upstream cannot restore", i)
				}
			}
		}
	})
}

// FuzzShard feeds arbitrary bytes as the content of one metadata shard of
// the small vector, inside a valid zstd frame: the deepest reader (objects,
// replicas, optional fields told apart by type) gets the fuzzer's whole
// attention instead of the frame's checksum-free entropy coding.
func FuzzShard(f *testing.F) {
	small := vectorFiles(f, "small")
	f.Add(msgpackOf(f, map[string]any{"metadata": []any{}}))
	f.Add([]byte{0x81, 0xa8, 'm', 'e', 't', 'a', 'd', 'a', 't', 'a', 0x91, 0x93, 0xa0, 0xa1, 'k', 0x97})
	f.Fuzz(func(t *testing.T, shard []byte) {
		z, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(true), zstd.WithZeroFrames(true))
		if err != nil {
			t.Fatal(err)
		}
		frame := z.EncodeAll(shard, nil)
		z.Close()
		var md bytes.Buffer
		e := msgpack.NewEncoder(&md)
		_ = e.EncodeMapLen(3)
		_ = e.EncodeString("shards")
		_ = e.EncodeMapLen(1)
		_ = e.EncodeUint(7)
		_ = e.EncodeBytes(frame)
		_ = e.EncodeString("discarded_replicas")
		_ = e.EncodeArrayLen(0)
		_ = e.EncodeString("replica_next_id")
		_ = e.EncodeUint(1 << 20)
		_, err = readFuzzed(md.Bytes(), small[legacysnap.SegmentsObject], small[legacysnap.TaskManagerObject])
		if err != nil && !typed(err) {
			t.Fatalf("untyped error: %v", err)
		}
	})
}
