package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/fixtures/legacy/legacyfixture"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"
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

var variantSpec = legacyfixture.SnapshotSpec{Taken: time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC), Seq: 10,
	View: 1, Segments: 2, Objects: 30, Seed: 9, Runtime: true}

// variant writes one snapshot of variantSpec after edit changed its
// content, then lets damage change its files, and reads it (Read, then
// Convert when Read succeeds).
func variant(t *testing.T, edit func(d *legacysnap.Decoded), damage func(dir string)) (*legacy.Snapshot, error, error) {
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
	snap, readErr := source(root).Read(context.Background(), "c1", id)
	if readErr != nil {
		return nil, readErr, nil
	}
	return snap, nil, snap.Convert()
}

// What reads but cannot be imported whole fails Convert with
// ErrNotImportable, and content inconsistent in itself with ErrContent;
// neither yields a state. (Damaged files fail the contract's reader:
// impl/contract/legacysnap's reader_test.go.)
func TestBrokenSnapshots(t *testing.T) {
	type damageCase struct {
		name string
		edit func(*legacysnap.Decoded)
		want error
		says string
	}
	mem := func(d *legacysnap.Decoded, i int) *legacysnap.MemoryReplica { return d.Objects[i].Replicas[0].Memory }
	cases := []damageCase{
		{name: "replica id not below replica_next_id", edit: func(d *legacysnap.Decoded) { d.ReplicaNextID = 2 }, want: legacy.ErrContent, says: "replica_next_id"},
		{name: "memory replica on an unknown segment",
			edit: func(d *legacysnap.Decoded) { mem(d, 3).Segment = legacysnap.UUID{Hi: 9, Lo: 9} },
			want: legacy.ErrNotImportable, says: "not mounted"},
		{name: "memory replica on a draining segment",
			edit: func(d *legacysnap.Decoded) { d.Segments[1].Status = legacysnap.SegmentDraining },
			want: legacy.ErrNotImportable, says: "DRAINING"},
		{name: "memory replica on a segment without an allocator",
			edit: func(d *legacysnap.Decoded) { d.Segments[1].Allocator = nil },
			want: legacy.ErrNotImportable, says: "without an allocator"},
		{name: "a replica status the model does not have",
			edit: func(d *legacysnap.Decoded) { d.Objects[4].Replicas[0].Status = 9 },
			want: legacy.ErrNotImportable, says: "STATUS_9"},
		{name: "two segments on one endpoint",
			edit: func(d *legacysnap.Decoded) { d.Segments[1].Endpoint = d.Segments[0].Endpoint },
			want: legacy.ErrNotImportable, says: "share transport endpoint"},
		{name: "replica beyond its segment",
			edit: func(d *legacysnap.Decoded) { mem(d, 0).Address = d.Segments[1].Base + d.Segments[1].Size },
			want: legacy.ErrContent, says: "outside segment"},
		{name: "a disk replica's path longer than the model holds", edit: func(d *legacysnap.Decoded) {
			d.Objects[4].Replicas = append(d.Objects[4].Replicas, legacysnap.Replica{ID: 1000, Status: legacysnap.ReplicaComplete, Type: legacysnap.ReplicaDisk,
				Disk: &legacysnap.DiskReplica{FilePath: strings.Repeat("p", 4097), ObjectSize: d.Objects[4].Size}})
			d.ReplicaNextID = 1001
		}, want: legacy.ErrContent, says: "longer than 4096"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap, readErr, err := variant(t, c.edit, nil)
			require.NoError(t, readErr, "the snapshot reads")
			require.ErrorIs(t, err, c.want)
			require.ErrorContains(t, err, c.says)
			require.Nil(t, snap.State, "a refused conversion yields no state")
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
	snap, readErr, convErr = variant(t, func(d *legacysnap.Decoded) { d.Objects[0].Replicas[0].Status = legacysnap.ReplicaUndefined }, nil)
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

// Disk, local-disk and DFS replicas beside memory ones import field for
// field as upstream's PUT_END payload carries them (state.Replica): a disk
// replica with its path and the object size as length, a local-disk one
// with its client, the object size and its transport endpoint as segment,
// a DFS one with path, offset, size, aligned size and shard index. (This
// importer refused all three before.)
func TestEveryReplicaKindImports(t *testing.T) {
	var key legacysnap.Object
	snap, readErr, convErr := variant(t, func(d *legacysnap.Decoded) {
		o := &d.Objects[4]
		o.Replicas = append(o.Replicas,
			legacysnap.Replica{ID: 1000, Status: legacysnap.ReplicaComplete, Type: legacysnap.ReplicaDisk,
				Disk: &legacysnap.DiskReplica{FilePath: "/mnt/shared/obj-4", ObjectSize: o.Size}},
			legacysnap.Replica{ID: 1001, Status: legacysnap.ReplicaProcessing, Type: legacysnap.ReplicaLocalDisk,
				LocalDisk: &legacysnap.LocalDiskReplica{Client: legacysnap.UUID{Hi: 1, Lo: 2}, ObjectSize: o.Size, Endpoint: "10.9.9.9:1"}},
			legacysnap.Replica{ID: 1002, Status: legacysnap.ReplicaComplete, Type: legacysnap.ReplicaDFS,
				DFS: &legacysnap.DFSReplica{FilePath: "/dfs/f", Offset: 4096, ObjectSize: o.Size, AlignedSize: 1 << 21, ShardIdx: 3}})
		d.ReplicaNextID = 1003
		key = *o
	}, nil)
	require.NoError(t, readErr)
	require.NoError(t, convErr)
	require.Equal(t, 30, snap.Objects)
	got, ok := snap.State.Object(key.Tenant, key.Key)
	require.True(t, ok)
	n := len(got.Replicas)
	require.Equal(t, []state.Replica{
		{ID: 1000, Kind: state.ReplicaDisk, FilePath: "/mnt/shared/obj-4", Length: key.Size, Status: state.ReplicaComplete},
		{ID: 1001, Kind: state.ReplicaLocalDisk, ClientID: state.UUID{First: 1, Second: 2}, Length: key.Size, Segment: "10.9.9.9:1", Status: state.ReplicaProcessing},
		{ID: 1002, Kind: state.ReplicaDFS, FilePath: "/dfs/f", Offset: 4096, Length: key.Size, AlignedSize: 1 << 21, ShardIdx: 3, Status: state.ReplicaComplete},
	}, got.Replicas[n-3:])
	require.Equal(t, state.ReplicaMemory, got.Replicas[0].Kind, "the memory replica stays as it was")
}
