package legacysnap_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/fixtures/legacy/legacyfixture"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

var errByName = map[string]error{
	"truncated": legacysnap.ErrTruncated, "manifest": legacysnap.ErrManifest, "descriptor": legacysnap.ErrDescriptor,
	"malformed": legacysnap.ErrMalformed, "content": legacysnap.ErrContent, "not_found": legacysnap.ErrNotFound, "id": legacysnap.ErrID,
}

func TestIDs(t *testing.T) {
	require.NoError(t, legacysnap.CheckID("20260620_143012_007"))
	for _, bad := range []string{"", "latest", "20261340_143012_007", "20260620_143012_7", "20260620-143012-007",
		"../20260620_143012_007", "20260620_143012_007/x"} {
		require.ErrorIs(t, legacysnap.CheckID(bad), legacysnap.ErrID, bad)
	}
	require.Equal(t, "20260620_143012_007", legacysnap.IDAt(time.Date(2026, 6, 20, 14, 30, 12, 7_400_000, time.UTC)))
	id, err := legacysnap.DecodeLatest([]byte("20260620_143012_007"))
	require.NoError(t, err)
	require.Equal(t, "20260620_143012_007", id)
	_, err = legacysnap.DecodeLatest([]byte("../../etc\n"))
	require.ErrorIs(t, err, legacysnap.ErrID)
}

func TestUUIDs(t *testing.T) {
	u, err := legacysnap.ParseUUID("6804376087003398145-4097")
	require.NoError(t, err)
	require.Equal(t, legacysnap.UUID{Hi: 6804376087003398145, Lo: 4097}, u)
	require.Equal(t, "6804376087003398145-4097", u.String())
	for _, bad := range []string{"", "-", "1-", "-1", "1", "01-2", "1-+2", " 1-2", "1-2x", "18446744073709551616-0", "1-2-3"} {
		_, err := legacysnap.ParseUUID(bad)
		require.Error(t, err, bad)
	}
}

// descriptor.txt is three canonical decimals; the manifest names the
// serializer and the snapshot's own id.
func TestTextFiles(t *testing.T) {
	d, err := legacysnap.DecodeDescriptor([]byte("5000|7|1781965812007\n"))
	require.NoError(t, err)
	require.Equal(t, legacysnap.Descriptor{Seq: 5000, ProducerView: 7, CreatedAtMS: 1781965812007}, d)
	require.Equal(t, "5000|7|1781965812007", string(legacysnap.EncodeDescriptor(d)))
	d, err = legacysnap.DecodeDescriptor([]byte("0|0|1"))
	require.NoError(t, err)
	require.Equal(t, legacysnap.Descriptor{CreatedAtMS: 1}, d)
	for _, bad := range []string{"", `{"schema_version":1}`, "10|1", "1|2|3|4", "01|1|1", "+1|1|1", "-1|1|1", "1||1", "1| 1|1",
		"99999999999999999999999|1|5", "1|1|4611686018427387905"} {
		_, err := legacysnap.DecodeDescriptor([]byte(bad))
		require.ErrorIs(t, err, legacysnap.ErrDescriptor, "%q", bad)
	}
	const id = "20260620_143012_007"
	require.Equal(t, "messagepack|1.0.0|"+id, legacysnap.ManifestFor(id))
	require.NoError(t, legacysnap.CheckManifest(id, []byte("messagepack|1.0.0|"+id+"\n")))
	for _, bad := range []string{"", "messagepack|1.0.0|20260620_143012_008", "struct_pack|1.0.0|" + id,
		"messagepack|2.0.0|" + id, "messagepack|1.0.0|" + id + "|x"} {
		require.ErrorIs(t, legacysnap.CheckManifest(id, []byte(bad)), legacysnap.ErrManifest, "%q", bad)
	}
}

var variantSpec = legacyfixture.SnapshotSpec{Taken: time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC), Seq: 10,
	View: 1, Segments: 2, Objects: 30, Seed: 9, Runtime: true}

// variant writes one snapshot of variantSpec after edit changed its
// content, then lets damage change its files, and reads it.
func variant(t *testing.T, edit func(d *legacysnap.Decoded), damage func(dir string)) (*legacysnap.Snapshot, error) {
	t.Helper()
	root := t.TempDir()
	id := legacysnap.IDAt(variantSpec.Taken)
	dir := filepath.Join(root, legacysnap.SnapshotRootBase, "c1", id)
	d := legacyfixture.Content(variantSpec)
	if edit != nil {
		edit(d)
	}
	require.NoError(t, legacyfixture.WriteSnapshot(dir, id, variantSpec, d))
	if damage != nil {
		damage(dir)
	}
	return source(root).Read(context.Background(), "c1", id)
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
// naming the file, and yields no snapshot. (What reads but cannot be
// imported whole is impl/legacy's to refuse: its reader_test.go.)
func TestBrokenSnapshots(t *testing.T) {
	type damageCase struct {
		name   string
		edit   func(*legacysnap.Decoded)
		damage func(string)
		want   error
		says   string
	}
	cases := []damageCase{
		{name: "descriptor missing", damage: write(t, legacysnap.DescriptorObject, nil), want: legacysnap.ErrNotFound, says: "descriptor.txt"},
		{name: "metadata missing", damage: write(t, legacysnap.MetadataObject, nil), want: legacysnap.ErrNotFound, says: "/metadata"},
		{name: "task_manager missing (upstream's restore requires it)", damage: write(t, legacysnap.TaskManagerObject, nil),
			want: legacysnap.ErrNotFound, says: "task_manager"},
		{name: "schema-v1 JSON descriptor", damage: write(t, legacysnap.DescriptorObject, []byte(`{"schema_version":1}`)),
			want: legacysnap.ErrDescriptor, says: "descriptor.txt"},
		{name: "descriptor with two fields", damage: write(t, legacysnap.DescriptorObject, []byte("10|1")), want: legacysnap.ErrDescriptor},
		{name: "descriptor overflow", damage: write(t, legacysnap.DescriptorObject, []byte("99999999999999999999999|1|5")), want: legacysnap.ErrDescriptor},
		{name: "manifest of another serializer", damage: write(t, legacysnap.ManifestObject,
			[]byte("struct_pack|1.0.0|20260102_030405_006")), want: legacysnap.ErrManifest, says: "manifest.txt"},
		{name: "manifest of another version", damage: write(t, legacysnap.ManifestObject,
			[]byte("messagepack|2.0.0|20260102_030405_006")), want: legacysnap.ErrManifest},
		{name: "segments empty file", damage: write(t, legacysnap.SegmentsObject, []byte{}), want: legacysnap.ErrTruncated, says: "segments"},
		{name: "segments not zstd", damage: write(t, legacysnap.SegmentsObject, []byte("not a zstd frame at all")), want: legacysnap.ErrMalformed, says: "segments"},
		{name: "segments frame cut", damage: edit(t, legacysnap.SegmentsObject, func(b []byte) []byte { return b[:len(b)/2] }), want: legacysnap.ErrTruncated},
		{name: "segments frame without its content size", damage: write(t, legacysnap.SegmentsObject,
			plainFrame(t, []byte{0x80})), want: legacysnap.ErrMalformed, says: "no content size"},
		{name: "segments frame followed by another", damage: edit(t, legacysnap.SegmentsObject,
			func(b []byte) []byte { return append(b, b...) }), want: legacysnap.ErrMalformed},
		{name: "segments of the cachelib allocator", damage: write(t, legacysnap.SegmentsObject,
			frameOf(t, map[string]any{"ma": 0, "an": []string{}, "ms": map[string]any{}, "cs": map[string]any{}})),
			want: legacysnap.ErrMalformed, says: `"ma"`},
		{name: "segments without client map", damage: write(t, legacysnap.SegmentsObject,
			frameOf(t, map[string]any{"ma": 1, "an": []string{}, "ms": map[string]any{}})),
			want: legacysnap.ErrMalformed, says: `no "cs"`},
		{name: "segments with an unknown key", damage: write(t, legacysnap.SegmentsObject,
			frameOf(t, map[string]any{"ma": 1, "an": []string{}, "ms": map[string]any{}, "cs": map[string]any{}, "nof": 1})),
			want: legacysnap.ErrMalformed, says: "unknown key"},
		{name: "task_manager not an array", damage: write(t, legacysnap.TaskManagerObject, frameOf(t, map[string]any{})),
			want: legacysnap.ErrMalformed, says: "task_manager"},
		{name: "task of 7 fields", damage: write(t, legacysnap.TaskManagerObject,
			frameOf(t, []any{[]any{"1-2", 0, 0, "{}", 1, 1, ""}})), want: legacysnap.ErrMalformed, says: "task 0"},
		{name: "metadata with trailing bytes", damage: edit(t, legacysnap.MetadataObject,
			func(b []byte) []byte { return append(b, 0xc0) }), want: legacysnap.ErrMalformed, says: "more bytes"},
		{name: "metadata cut", damage: edit(t, legacysnap.MetadataObject, func(b []byte) []byte { return b[:len(b)-3] }), want: legacysnap.ErrTruncated},
		{name: "metadata not a map", damage: write(t, legacysnap.MetadataObject, []byte{0x90}), want: legacysnap.ErrMalformed, says: "want a map"},
		{name: "metadata with an unknown key", damage: write(t, legacysnap.MetadataObject,
			msgpackOf(t, map[string]any{"shards": map[string]any{}, "discarded_replicas": []any{}, "replica_next_id": 1,
				"version": 2})), want: legacysnap.ErrMalformed, says: "unknown key"},
		{name: "metadata without replica_next_id", damage: write(t, legacysnap.MetadataObject,
			msgpackOf(t, map[string]any{"shards": map[string]any{}, "discarded_replicas": []any{}})),
			want: legacysnap.ErrMalformed, says: `no "replica_next_id"`},
		{name: "shard index beyond 1023", edit: func(d *legacysnap.Decoded) { d.Objects[0].Shard = 1024 }, want: legacysnap.ErrMalformed, says: "out of range"},
		{name: "replica of an unknown type", edit: func(d *legacysnap.Decoded) {
			d.Objects[2].Replicas[0].Type = 3
		}, want: legacysnap.ErrMalformed, says: "replica type 3"},
		{name: "duplicate key", edit: func(d *legacysnap.Decoded) {
			d.Objects[5].Tenant, d.Objects[5].Key = d.Objects[4].Tenant, d.Objects[4].Key
		}, want: legacysnap.ErrContent, says: "same tenant and key"},
		{name: "discarded replica on a draining segment", edit: func(d *legacysnap.Decoded) {
			d.Segments[0].Status = legacysnap.SegmentDraining
			for i := range d.Objects { // keep the objects restorable: move them off segment 0
				for j := range d.Objects[i].Replicas {
					d.Objects[i].Replicas[j].Memory.Segment = d.Segments[1].ID
				}
			}
		}, want: legacysnap.ErrContent, says: "refuses the snapshot"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap, err := variant(t, c.edit, c.damage)
			require.ErrorIs(t, err, c.want)
			require.ErrorContains(t, err, c.says)
			require.Nil(t, snap)
			for _, other := range errByName {
				if other != c.want {
					require.False(t, errors.Is(err, other), "%v is also %v", err, other)
				}
			}
			t.Logf("%v", err)
		})
	}
	snap, err := variant(t, nil, nil)
	require.NoError(t, err, "the undamaged variant reads")
	require.Len(t, snap.Decoded.Objects, 30)
}

// Replicas of every kind the layout carries decode with their fields.
func TestEveryReplicaKindDecodes(t *testing.T) {
	disk := legacysnap.Replica{ID: 1000, Status: legacysnap.ReplicaComplete, Type: legacysnap.ReplicaDisk,
		Disk: &legacysnap.DiskReplica{FilePath: "/mnt/shared/obj-4", ObjectSize: 77}}
	local := legacysnap.Replica{ID: 1001, Status: legacysnap.ReplicaProcessing, Type: legacysnap.ReplicaLocalDisk,
		LocalDisk: &legacysnap.LocalDiskReplica{Client: legacysnap.UUID{Hi: 1, Lo: 2}, ObjectSize: 77, Endpoint: "10.9.9.9:1"}}
	dfs := legacysnap.Replica{ID: 1002, Status: legacysnap.ReplicaComplete, Type: legacysnap.ReplicaDFS,
		DFS: &legacysnap.DFSReplica{FilePath: "/dfs/f", Offset: 4096, ObjectSize: 77, AlignedSize: 8192, ShardIdx: -3}}
	snap, err := variant(t, func(d *legacysnap.Decoded) {
		d.Objects[4].Replicas = append(d.Objects[4].Replicas, disk, local, dfs)
		d.ReplicaNextID = 1003
	}, nil)
	require.NoError(t, err)
	var got *legacysnap.Object
	for i, o := range snap.Decoded.Objects {
		if len(o.Replicas) > 0 && o.Replicas[len(o.Replicas)-1].ID == 1002 {
			got = &snap.Decoded.Objects[i]
		}
	}
	require.NotNil(t, got)
	n := len(got.Replicas)
	require.Equal(t, []legacysnap.Replica{disk, local, dfs}, got.Replicas[n-3:])
}

func TestMissingRootAndLatest(t *testing.T) {
	_, err := source(t.TempDir()).Latest(context.Background(), "c1")
	require.ErrorIs(t, err, legacysnap.ErrNotFound)
	root := t.TempDir()
	dir := filepath.Join(root, legacysnap.SnapshotRootBase, "c1")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, legacysnap.LatestObject), []byte("../../etc\n"), 0o644))
	_, err = source(root).Latest(context.Background(), "c1")
	require.ErrorIs(t, err, legacysnap.ErrID)
	_, err = source(root).Read(context.Background(), "c1", "20260620_143012_007")
	require.ErrorIs(t, err, legacysnap.ErrNotFound)
	_, err = source(root).Read(context.Background(), "c1", "../20260620_143012_007")
	require.ErrorIs(t, err, legacysnap.ErrID)
	// The layout is upstream's: a root pointed at mooncake_master_snapshot itself finds nothing.
	_, err = source(filepath.Join(vectors, "small", legacysnap.SnapshotRootBase)).Latest(context.Background(), "mooncake_cluster")
	require.ErrorIs(t, err, legacysnap.ErrNotFound)
}

// A file larger than the layout allows fails as malformed, without being
// read whole.
func TestOversizedTextFile(t *testing.T) {
	st := memStore{"mooncake_master_snapshot/c/latest.txt": make([]byte, 5000)}
	_, err := legacysnap.Source{Store: st}.Latest(context.Background(), "c")
	require.ErrorIs(t, err, legacysnap.ErrMalformed)
	require.ErrorContains(t, err, "larger than 4096 bytes")
}

// A header claiming far more elements or bytes than the document holds
// fails where it stands, as truncation; it allocates nothing like what it
// claims.
func TestHugeLengthHeadersAreTruncation(t *testing.T) {
	const id = "20260620_143012_007"
	dir := filepath.Join(fixtures, "small", legacysnap.SnapshotRootBase, "mooncake_cluster", id)
	files := map[string][]byte{}
	for _, name := range []string{legacysnap.DescriptorObject, legacysnap.ManifestObject, legacysnap.SegmentsObject,
		legacysnap.MetadataObject, legacysnap.TaskManagerObject} {
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
				st["c/"+legacysnap.SnapshotRootBase+"/c/"+id+"/"+k] = v
			}
			st["c/"+legacysnap.SnapshotRootBase+"/c/"+id+"/"+legacysnap.MetadataObject] = metadata
			_, err := legacysnap.Source{Store: st, Root: "c"}.Read(context.Background(), "c", id)
			require.Error(t, err)
			require.True(t, errors.Is(err, legacysnap.ErrTruncated) || errors.Is(err, legacysnap.ErrMalformed), "%v", err)
			t.Logf("%v", err)
		})
	}
}

// hugeFrameHeader is the start of a zstd frame whose header claims 2^40
// bytes of content.
func hugeFrameHeader() []byte {
	return []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0, 0x01}
}
