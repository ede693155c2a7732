package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/oplogha/oplogha/fixtures/legacy/legacyfixture"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/state"
)

const fixtures = "../../fixtures/legacy"

func source(root string) legacy.Source {
	return legacy.Source{Store: &localdir.Store{Root: root}}
}

func readExpect(t *testing.T, name string) legacyfixture.Expect {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name, "expect.json"))
	require.NoError(t, err)
	var e legacyfixture.Expect
	require.NoError(t, json.Unmarshal(data, &e))
	return e
}

var errByName = map[string]error{
	"truncated": legacy.ErrTruncated, "manifest": legacy.ErrManifest, "descriptor": legacy.ErrDescriptor,
	"malformed": legacy.ErrMalformed, "content": legacy.ErrContent, "not_found": legacy.ErrNotFound,
}

// Every committed fixture reads as its expect.json says: valid ones give the
// exact state digest computed by applying the same rows as OpLog mutations,
// broken ones fail with their typed error and no state.
func TestCommittedFixtures(t *testing.T) {
	ctx := context.Background()
	for _, f := range legacyfixture.Fixtures() {
		t.Run(f.Name, func(t *testing.T) {
			exp := readExpect(t, f.Name)
			src := source(filepath.Join(fixtures, f.Name))
			id, err := src.Latest(ctx, exp.ClusterID)
			require.NoError(t, err)
			require.Equal(t, exp.SnapshotID, id)
			snap, err := src.Open(ctx, exp.ClusterID, id)
			if exp.Outcome == "error" {
				want := errByName[exp.Error]
				require.NotNil(t, want, "expect.json names unknown error %q", exp.Error)
				require.ErrorIs(t, err, want)
				require.Nil(t, snap)
				t.Logf("refused as expected: %v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, exp.Seq, snap.Seq)
			require.Equal(t, exp.View, snap.ProducerView)
			require.Equal(t, exp.Objects, snap.Objects)
			require.Equal(t, exp.Segments, snap.Segments)
			require.Equal(t, exp.Digest, string(snap.State.Digest()))
			require.Equal(t, legacy.ImportCursor(exp.Seq), snap.State.Cursor())
			n, s := snap.State.Len()
			require.Equal(t, exp.Objects, n)
			require.Equal(t, exp.Segments, s)
			for _, o := range exp.Older {
				older, err := src.Open(ctx, exp.ClusterID, o.SnapshotID)
				require.NoError(t, err, "explicit import of an older snapshot")
				require.Equal(t, o.Digest, string(older.State.Digest()))
				require.Equal(t, o.Objects, older.Objects)
			}
		})
	}
}

func TestImportCursor(t *testing.T) {
	require.Equal(t, state.Cursor{BatchID: 1, Seq: 1}, legacy.ImportCursor(0), "snapshot-only mode had no sequence")
	require.Equal(t, state.Cursor{BatchID: 1, Seq: 5000}, legacy.ImportCursor(5000))
	require.True(t, legacy.ImportCursor(0).Consistent())
}

func TestIDs(t *testing.T) {
	require.NoError(t, legacy.CheckID("20260620_143012_007"))
	for _, bad := range []string{"", "latest", "20261340_143012_007", "20260620_143012_7", "20260620-143012-007", "../20260620_143012_007", "20260620_143012_007/x"} {
		require.ErrorIs(t, legacy.CheckID(bad), legacy.ErrID, bad)
	}
	require.Equal(t, "20260620_143012_007", legacy.IDAt(time.Date(2026, 6, 20, 14, 30, 12, 7_400_000, time.UTC)))
}

// variant writes one snapshot with content drawn from spec and lets mutate
// damage it before it is read.
func variant(t *testing.T, spec legacyfixture.SnapshotSpec, mutate func(dir string, segs []legacy.Segment, rows []legacy.Row) ([]legacy.Segment, []legacy.Row)) (*legacy.Snapshot, error) {
	t.Helper()
	root := t.TempDir()
	id := legacy.IDAt(spec.Taken)
	dir := filepath.Join(root, "c1", id)
	segs, rows := legacyfixture.Content(spec)
	if mutate != nil {
		segs, rows = mutate("", segs, rows)
	}
	require.NoError(t, legacyfixture.WriteSnapshot(dir, id, spec, segs, rows))
	if mutate != nil {
		mutate(dir, nil, nil)
	}
	return source(root).Open(context.Background(), "c1", id)
}

func TestBrokenSnapshots(t *testing.T) {
	spec := legacyfixture.SnapshotSpec{Taken: time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC), Seq: 10, View: 1, Segments: 2, Objects: 30, Shards: 4, Seed: 9}
	write := func(name string, data []byte) func(string, []legacy.Segment, []legacy.Row) ([]legacy.Segment, []legacy.Row) {
		return func(dir string, s []legacy.Segment, r []legacy.Row) ([]legacy.Segment, []legacy.Row) {
			if dir != "" {
				if data == nil {
					require.NoError(t, os.Remove(filepath.Join(dir, name)))
				} else {
					require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
				}
			}
			return s, r
		}
	}
	rewriteMetadata := func(edit func(*legacy.Metadata)) func(string, []legacy.Segment, []legacy.Row) ([]legacy.Segment, []legacy.Row) {
		return func(dir string, s []legacy.Segment, r []legacy.Row) ([]legacy.Segment, []legacy.Row) {
			if dir != "" {
				p := filepath.Join(dir, legacy.MetadataObject)
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				var md legacy.Metadata
				require.NoError(t, msgpack.Unmarshal(data, &md))
				edit(&md)
				data, err = msgpack.Marshal(md)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, data, 0o644))
			}
			return s, r
		}
	}
	cases := []struct {
		name   string
		mutate func(string, []legacy.Segment, []legacy.Row) ([]legacy.Segment, []legacy.Row)
		want   error
	}{
		{"descriptor missing", write(legacy.DescriptorObject, nil), legacy.ErrNotFound},
		{"metadata missing", write(legacy.MetadataObject, nil), legacy.ErrNotFound},
		{"schema-v1 JSON descriptor", write(legacy.DescriptorObject, []byte(`{"schema_version":1}`)), legacy.ErrDescriptor},
		{"descriptor with two fields", write(legacy.DescriptorObject, []byte("10|1")), legacy.ErrDescriptor},
		{"descriptor overflow", write(legacy.DescriptorObject, []byte("99999999999999999999999|1|5")), legacy.ErrDescriptor},
		{"manifest of another serializer", write(legacy.ManifestObject, []byte("struct_pack|1.0.0|20260102_030405_006")), legacy.ErrManifest},
		{"manifest of another version", write(legacy.ManifestObject, []byte("messagepack|2.0.0|20260102_030405_006")), legacy.ErrManifest},
		{"segments empty file", write(legacy.SegmentsObject, []byte{}), legacy.ErrTruncated},
		{"segments garbage", write(legacy.SegmentsObject, []byte("not msgpack at all")), legacy.ErrMalformed},
		{"metadata with trailing bytes", func(dir string, s []legacy.Segment, r []legacy.Row) ([]legacy.Segment, []legacy.Row) {
			if dir != "" {
				p := filepath.Join(dir, legacy.MetadataObject)
				data, _ := os.ReadFile(p)
				require.NoError(t, os.WriteFile(p, append(data, 0xc0), 0o644))
			}
			return s, r
		}, legacy.ErrMalformed},
		{"unknown metadata version", rewriteMetadata(func(m *legacy.Metadata) { m.Version = 2 }), legacy.ErrMalformed},
		{"a shard missing", rewriteMetadata(func(m *legacy.Metadata) { m.Shards = m.Shards[:len(m.Shards)-1] }), legacy.ErrTruncated},
		{"object count disagrees", rewriteMetadata(func(m *legacy.Metadata) { m.ObjectCount++ }), legacy.ErrTruncated},
		{"shard row count disagrees", rewriteMetadata(func(m *legacy.Metadata) { m.Shards[0].Rows++ }), legacy.ErrTruncated},
		{"shard frame cut", rewriteMetadata(func(m *legacy.Metadata) { m.Shards[1].Zstd = m.Shards[1].Zstd[:len(m.Shards[1].Zstd)/2] }), legacy.ErrTruncated},
		{"shard not zstd", rewriteMetadata(func(m *legacy.Metadata) { m.Shards[1].Zstd = []byte("plain bytes, no frame") }), legacy.ErrMalformed},
		{"shards out of order", rewriteMetadata(func(m *legacy.Metadata) { m.Shards[0].Index, m.Shards[1].Index = 1, 0 }), legacy.ErrMalformed},
		{"replica id beyond replica_next_id", rewriteMetadata(func(m *legacy.Metadata) { m.ReplicaNextID = 1 }), legacy.ErrContent},
		{"replica on an unknown segment", func(dir string, s []legacy.Segment, r []legacy.Row) ([]legacy.Segment, []legacy.Row) {
			if dir == "" {
				r[3].Object.Replicas[0].Segment = "10.9.9.9:1"
			}
			return s, r
		}, legacy.ErrContent},
		{"duplicate key", func(dir string, s []legacy.Segment, r []legacy.Row) ([]legacy.Segment, []legacy.Row) {
			if dir == "" {
				r[5].Tenant, r[5].Key = r[4].Tenant, r[4].Key
			}
			return s, r
		}, legacy.ErrContent},
		{"replica beyond its segment", func(dir string, s []legacy.Segment, r []legacy.Row) ([]legacy.Segment, []legacy.Row) {
			if dir == "" {
				r[0].Object.Replicas[0].Offset = 2 << 30
			}
			return s, r
		}, legacy.ErrContent},
		{"unknown replica status", func(dir string, s []legacy.Segment, r []legacy.Row) ([]legacy.Segment, []legacy.Row) {
			if dir == "" {
				r[0].Object.Replicas[0].Status = "lost"
			}
			return s, r
		}, legacy.ErrContent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap, err := variant(t, spec, c.mutate)
			require.ErrorIs(t, err, c.want)
			require.Nil(t, snap)
			for _, other := range errByName {
				if other != c.want {
					require.False(t, errors.Is(err, other), "%v is also %v", err, other)
				}
			}
		})
	}
	snap, err := variant(t, spec, nil)
	require.NoError(t, err, "the undamaged variant reads")
	require.Equal(t, 30, snap.Objects)
}

func TestMissingRootAndLatest(t *testing.T) {
	_, err := source(t.TempDir()).Latest(context.Background(), "c1")
	require.ErrorIs(t, err, legacy.ErrNotFound)
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "c1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "c1", legacy.LatestObject), []byte("../../etc\n"), 0o644))
	_, err = source(root).Latest(context.Background(), "c1")
	require.ErrorIs(t, err, legacy.ErrID)
	_, err = source(root).Open(context.Background(), "c1", "20260620_143012_007")
	require.ErrorIs(t, err, legacy.ErrNotFound)
}

// A header claiming far more elements than the data holds fails at the end
// of the data; it allocates nothing like what it claims (found by FuzzOpen:
// 24 bytes of segments announcing 2^32 entries ran the process out of memory).
func TestHugeLengthHeadersAreTruncation(t *testing.T) {
	const id = "20260620_143012_007"
	array32 := func(prefix ...byte) []byte { return append(prefix, 0xdd, 0xff, 0xff, 0xff, 0xff) }
	segs := array32(0x82, 0xa7, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x01, 0xa8, 's', 'e', 'g', 'm', 'e', 'n', 't', 's')
	st := memStore{"c/" + id + "/descriptor.txt": []byte("1|1|1"), "c/" + id + "/manifest.txt": []byte(legacy.ManifestFor(id)), "c/" + id + "/segments": segs}
	_, err := legacy.Source{Store: st}.Open(context.Background(), "c", id)
	require.ErrorIs(t, err, legacy.ErrTruncated)

	good, err := os.ReadFile(filepath.Join(fixtures, "small", "mooncake_cluster", id, legacy.SegmentsObject))
	require.NoError(t, err)
	st["c/"+id+"/segments"] = good
	st["c/"+id+"/metadata"] = array32(0x85, 0xa7, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x01, 0xab, 's', 'h', 'a', 'r', 'd', '_', 'c', 'o', 'u', 'n', 't', 0x01,
		0xac, 'o', 'b', 'j', 'e', 'c', 't', '_', 'c', 'o', 'u', 'n', 't', 0x00, 0xaf, 'r', 'e', 'p', 'l', 'i', 'c', 'a', '_', 'n', 'e', 'x', 't', '_', 'i', 'd', 0x01,
		0xa6, 's', 'h', 'a', 'r', 'd', 's')
	_, err = legacy.Source{Store: st}.Open(context.Background(), "c", id)
	require.ErrorIs(t, err, legacy.ErrTruncated)
}
