package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/fixtures/legacy/legacyfixture"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/state"
)

const fixtures = "../../fixtures/legacy"

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
	"not_importable": legacy.ErrNotImportable, "id": legacy.ErrID,
}

// Every committed fixture reads as its expect.json says: valid ones give the
// exact state digest computed by applying the same content as OpLog
// mutations, broken ones fail with their typed error and no state.
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

func TestUUIDs(t *testing.T) {
	u, err := legacy.ParseUUID("6804376087003398145-4097")
	require.NoError(t, err)
	require.Equal(t, legacy.UUID{Hi: 6804376087003398145, Lo: 4097}, u)
	require.Equal(t, "6804376087003398145-4097", u.String())
	for _, bad := range []string{"", "-", "1-", "-1", "1", "01-2", "1-+2", " 1-2", "1-2x", "18446744073709551616-0", "1-2-3"} {
		_, err := legacy.ParseUUID(bad)
		require.Error(t, err, bad)
	}
}

var variantSpec = legacyfixture.SnapshotSpec{Taken: time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC), Seq: 10, View: 1, Segments: 2, Objects: 30, Seed: 9, Runtime: true}

// variant writes one snapshot of variantSpec after edit changed its
// content, then lets damage change its files, and reads it (Read, then
// Convert when Read succeeds).
func variant(t *testing.T, edit func(d *legacy.Decoded), damage func(dir string)) (*legacy.Snapshot, error, error) {
	t.Helper()
	root := t.TempDir()
	id := legacy.IDAt(variantSpec.Taken)
	dir := filepath.Join(root, legacy.SnapshotRootBase, "c1", id)
	d := legacyfixture.Content(variantSpec)
	if edit != nil {
		edit(d)
	}
	require.NoError(t, legacyfixture.WriteSnapshot(dir, id, variantSpec, d))
	if damage != nil {
		damage(dir)
	}
	snap, readErr := source(root).Read(context.Background(), "c1", id)
	if readErr != nil {
		return nil, readErr, nil
	}
	return snap, nil, snap.Convert()
}

func write(t *testing.T, name string, data []byte) func(string) {
	return func(dir string) {
		if data == nil {
			require.NoError(t, os.Remove(filepath.Join(dir, name)))
			return
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
}

func edit(t *testing.T, name string, f func([]byte) []byte) func(string) {
	return func(dir string) {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, f(data), 0o644))
	}
}

// plainFrame is a zstd frame of plain written the way a streaming
// compressor does, with no content size in its header.
func plainFrame(t *testing.T, plain []byte) []byte {
	z, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	require.NoError(t, err)
	defer z.Close()
	return z.EncodeAll(plain, nil)
}

// Each kind of damage, to each file, fails Read with its one typed error,
// naming the file; content upstream wrote but this importer cannot bring in
// whole fails Convert with ErrNotImportable; nothing yields a state.
func TestBrokenSnapshots(t *testing.T) {
	type damageCase struct {
		name   string
		edit   func(*legacy.Decoded)
		damage func(string)
		want   error
		says   string
	}
	mem := func(d *legacy.Decoded, i int) *legacy.MemoryReplica { return d.Objects[i].Replicas[0].Memory }
	cases := []damageCase{
		{name: "descriptor missing", damage: write(t, legacy.DescriptorObject, nil), want: legacy.ErrNotFound, says: "descriptor.txt"},
		{name: "metadata missing", damage: write(t, legacy.MetadataObject, nil), want: legacy.ErrNotFound, says: "/metadata"},
		{name: "task_manager missing (upstream's restore requires it)", damage: write(t, legacy.TaskManagerObject, nil), want: legacy.ErrNotFound, says: "task_manager"},
		{name: "schema-v1 JSON descriptor", damage: write(t, legacy.DescriptorObject, []byte(`{"schema_version":1}`)), want: legacy.ErrDescriptor},
		{name: "descriptor with two fields", damage: write(t, legacy.DescriptorObject, []byte("10|1")), want: legacy.ErrDescriptor},
		{name: "descriptor overflow", damage: write(t, legacy.DescriptorObject, []byte("99999999999999999999999|1|5")), want: legacy.ErrDescriptor},
		{name: "manifest of another serializer", damage: write(t, legacy.ManifestObject, []byte("struct_pack|1.0.0|20260102_030405_006")), want: legacy.ErrManifest},
		{name: "manifest of another version", damage: write(t, legacy.ManifestObject, []byte("messagepack|2.0.0|20260102_030405_006")), want: legacy.ErrManifest},
		{name: "segments empty file", damage: write(t, legacy.SegmentsObject, []byte{}), want: legacy.ErrTruncated, says: "segments"},
		{name: "segments not zstd", damage: write(t, legacy.SegmentsObject, []byte("not a zstd frame at all")), want: legacy.ErrMalformed, says: "segments"},
		{name: "segments frame cut", damage: edit(t, legacy.SegmentsObject, func(b []byte) []byte { return b[:len(b)/2] }), want: legacy.ErrTruncated},
		{name: "segments frame without its content size", damage: write(t, legacy.SegmentsObject, plainFrame(t, []byte{0x80})), want: legacy.ErrMalformed, says: "no content size"},
		{name: "segments frame followed by another", damage: edit(t, legacy.SegmentsObject, func(b []byte) []byte { return append(b, b...) }), want: legacy.ErrMalformed},
		{name: "segments of the cachelib allocator", damage: write(t, legacy.SegmentsObject, frameOf(t, map[string]any{"ma": 0, "an": []string{}, "ms": map[string]any{}, "cs": map[string]any{}})), want: legacy.ErrMalformed, says: `"ma"`},
		{name: "segments without client map", damage: write(t, legacy.SegmentsObject, frameOf(t, map[string]any{"ma": 1, "an": []string{}, "ms": map[string]any{}})), want: legacy.ErrMalformed, says: `no "cs"`},
		{name: "segments with an unknown key", damage: write(t, legacy.SegmentsObject, frameOf(t, map[string]any{"ma": 1, "an": []string{}, "ms": map[string]any{}, "cs": map[string]any{}, "nof": 1})), want: legacy.ErrMalformed, says: "unknown key"},
		{name: "task_manager not an array", damage: write(t, legacy.TaskManagerObject, frameOf(t, map[string]any{})), want: legacy.ErrMalformed, says: "task_manager"},
		{name: "task of 7 fields", damage: write(t, legacy.TaskManagerObject, frameOf(t, []any{[]any{"1-2", 0, 0, "{}", 1, 1, ""}})), want: legacy.ErrMalformed, says: "task 0"},
		{name: "metadata with trailing bytes", damage: edit(t, legacy.MetadataObject, func(b []byte) []byte { return append(b, 0xc0) }), want: legacy.ErrMalformed, says: "more bytes"},
		{name: "metadata cut", damage: edit(t, legacy.MetadataObject, func(b []byte) []byte { return b[:len(b)-3] }), want: legacy.ErrTruncated},
		{name: "metadata not a map", damage: write(t, legacy.MetadataObject, []byte{0x90}), want: legacy.ErrMalformed, says: "want a map"},
		{name: "metadata with an unknown key", damage: write(t, legacy.MetadataObject, msgpackOf(t, map[string]any{"shards": map[string]any{}, "discarded_replicas": []any{}, "replica_next_id": 1, "version": 2})), want: legacy.ErrMalformed, says: "unknown key"},
		{name: "metadata without replica_next_id", damage: write(t, legacy.MetadataObject, msgpackOf(t, map[string]any{"shards": map[string]any{}, "discarded_replicas": []any{}})), want: legacy.ErrMalformed, says: `no "replica_next_id"`},
		{name: "shard index beyond 1023", edit: func(d *legacy.Decoded) { d.Objects[0].Shard = 1024 }, want: legacy.ErrMalformed, says: "out of range"},
		{name: "replica of an unknown type", edit: func(d *legacy.Decoded) {
			d.Objects[2].Replicas[0].Type = 3
		}, want: legacy.ErrMalformed, says: "replica type 3"},
		{name: "replica id not below replica_next_id", edit: func(d *legacy.Decoded) { d.ReplicaNextID = 2 }, want: legacy.ErrContent, says: "replica_next_id"},
		{name: "memory replica on an unknown segment", edit: func(d *legacy.Decoded) { mem(d, 3).Segment = legacy.UUID{Hi: 9, Lo: 9} }, want: legacy.ErrNotImportable, says: "not mounted"},
		{name: "memory replica on a draining segment", edit: func(d *legacy.Decoded) { d.Segments[1].Status = legacy.SegmentDraining }, want: legacy.ErrNotImportable, says: "DRAINING"},
		{name: "memory replica on a segment without an allocator", edit: func(d *legacy.Decoded) { d.Segments[1].Allocator = nil }, want: legacy.ErrNotImportable, says: "without an allocator"},
		{name: "a local-disk replica", edit: func(d *legacy.Decoded) {
			d.Objects[4].Replicas = append(d.Objects[4].Replicas, legacy.Replica{ID: 1000, Status: legacy.ReplicaComplete, Type: legacy.ReplicaLocalDisk,
				LocalDisk: &legacy.LocalDiskReplica{Client: legacy.UUID{Hi: 1, Lo: 1}, ObjectSize: d.Objects[4].Size, Endpoint: "10.9.9.9:1"}})
			d.ReplicaNextID = 1001
		}, want: legacy.ErrNotImportable, says: "LOCAL_DISK"},
		{name: "two segments on one endpoint", edit: func(d *legacy.Decoded) { d.Segments[1].Endpoint = d.Segments[0].Endpoint }, want: legacy.ErrNotImportable, says: "share transport endpoint"},
		{name: "duplicate key", edit: func(d *legacy.Decoded) { d.Objects[5].Tenant, d.Objects[5].Key = d.Objects[4].Tenant, d.Objects[4].Key }, want: legacy.ErrContent, says: "same tenant and key"},
		{name: "replica beyond its segment", edit: func(d *legacy.Decoded) { mem(d, 0).Address = d.Segments[1].Base + d.Segments[1].Size }, want: legacy.ErrContent, says: "outside segment"},
		{name: "discarded replica on a draining segment", edit: func(d *legacy.Decoded) {
			d.Segments[0].Status = legacy.SegmentDraining
			for i := range d.Objects { // keep the objects restorable: move them off segment 0
				for j := range d.Objects[i].Replicas {
					d.Objects[i].Replicas[j].Memory.Segment = d.Segments[1].ID
				}
			}
		}, want: legacy.ErrContent, says: "refuses the snapshot"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap, readErr, convErr := variant(t, c.edit, c.damage)
			err := readErr
			if err == nil {
				err = convErr
			}
			require.ErrorIs(t, err, c.want)
			require.ErrorContains(t, err, c.says)
			if readErr == nil {
				require.Nil(t, snap.State, "a refused conversion yields no state")
			}
			for _, other := range errByName {
				if other != c.want {
					require.False(t, errors.Is(err, other), "%v is also %v", err, other)
				}
			}
			t.Logf("%v", err)
		})
	}
	snap, readErr, convErr := variant(t, nil, nil)
	require.NoError(t, readErr)
	require.NoError(t, convErr, "the undamaged variant imports")
	require.Equal(t, 30, snap.Objects)

	// UNDEFINED is one of the state model's statuses (upstream's enum,
	// 0..5): a replica with it imports with it, nothing else changed.
	snap, readErr, convErr = variant(t, func(d *legacy.Decoded) { d.Objects[0].Replicas[0].Status = legacy.ReplicaUndefined }, nil)
	require.NoError(t, readErr)
	require.NoError(t, convErr)
	require.Equal(t, 30, snap.Objects)
	first := snap.Decoded.Objects[0]
	got, ok := snap.State.Object(first.Tenant, first.Key)
	require.True(t, ok)
	require.Equal(t, state.ReplicaUndefined, got.Replicas[0].Status)
	require.Equal(t, state.UUID{First: first.ClientID.Hi, Second: first.ClientID.Lo}, got.ClientID)
}

func TestMissingRootAndLatest(t *testing.T) {
	_, err := source(t.TempDir()).Latest(context.Background(), "c1")
	require.ErrorIs(t, err, legacy.ErrNotFound)
	root := t.TempDir()
	dir := filepath.Join(root, legacy.SnapshotRootBase, "c1")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, legacy.LatestObject), []byte("../../etc\n"), 0o644))
	_, err = source(root).Latest(context.Background(), "c1")
	require.ErrorIs(t, err, legacy.ErrID)
	_, err = source(root).Open(context.Background(), "c1", "20260620_143012_007")
	require.ErrorIs(t, err, legacy.ErrNotFound)
	// The layout is upstream's: a root pointed at mooncake_master_snapshot itself finds nothing.
	_, err = source(filepath.Join(vectors, "small", legacy.SnapshotRootBase)).Latest(context.Background(), "mooncake_cluster")
	require.ErrorIs(t, err, legacy.ErrNotFound)
}

// A header claiming far more elements or bytes than the document holds
// fails where it stands, as truncation; it allocates nothing like what it
// claims.
func TestHugeLengthHeadersAreTruncation(t *testing.T) {
	const id = "20260620_143012_007"
	dir := filepath.Join(fixtures, "small", legacy.SnapshotRootBase, "mooncake_cluster", id)
	files := map[string][]byte{}
	for _, name := range []string{legacy.DescriptorObject, legacy.ManifestObject, legacy.SegmentsObject, legacy.MetadataObject, legacy.TaskManagerObject} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		files[name] = data
	}
	huge := map[string][]byte{
		"array32":                    {0x81, 0xa6, 's', 'h', 'a', 'r', 'd', 's', 0xdd, 0xff, 0xff, 0xff, 0xff},
		"map32":                      {0xdf, 0xff, 0xff, 0xff, 0xff},
		"str32":                      {0x81, 0xdb, 0xff, 0xff, 0xff, 0xf0},
		"bin32":                      {0x81, 0xa6, 's', 'h', 'a', 'r', 'd', 's', 0x81, 0x01, 0xc6, 0xff, 0xff, 0xff, 0xf0},
		"shard frame claiming 1 TiB": append([]byte{0x81, 0xa6, 's', 'h', 'a', 'r', 'd', 's', 0x81, 0x01, 0xc4, 0x0e}, hugeFrameHeader()...),
	}
	for name, metadata := range huge {
		t.Run(name, func(t *testing.T) {
			st := memStore{}
			for k, v := range files {
				st["c/"+legacy.SnapshotRootBase+"/c/"+id+"/"+k] = v
			}
			st["c/"+legacy.SnapshotRootBase+"/c/"+id+"/"+legacy.MetadataObject] = metadata
			_, err := legacy.Source{Store: st, Root: "c"}.Read(context.Background(), "c", id)
			require.Error(t, err)
			require.True(t, errors.Is(err, legacy.ErrTruncated) || errors.Is(err, legacy.ErrMalformed), "%v", err)
			t.Logf("%v", err)
		})
	}
}

// hugeFrameHeader is the start of a zstd frame whose header claims 2^40
// bytes of content.
func hugeFrameHeader() []byte {
	return []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0, 0x01}
}
