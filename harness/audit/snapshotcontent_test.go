package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/model"
	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// keptObject is one object as a snapshot chunk holds it: a memory replica
// [offset, offset+size) on seg, as putEntry writes it to the OpLog.
func keptObject(key, seg string, offset, size uint64) batchsnap.ObjectEntry {
	return batchsnap.ObjectEntry{TenantID: "t", Key: key, Metadata: batchsnap.ObjectMetadata{
		ClientID: metadata.UUID{First: 1, Second: 2}, Size: size, DataType: metadata.DataUnknown, HardPinned: batchsnap.PinnedFalse,
		Replicas: []metadata.ReplicaFields{{ID: 7, Index: 0, Status: metadata.ReplicaComplete,
			Buffer: metadata.BufferDescriptor{Size: size, BufferAddress: offset, Protocol: "tcp", TransportEndpoint: seg}}}}}
}

// keptSegment is the segment mountEntry mounts.
func keptSegment(endpoint string) batchsnap.SegmentInfo {
	return batchsnap.SegmentInfo{SegmentName: "seg", TransportEndpoint: endpoint, Capacity: 1 << 20, IsMemorySegment: true}
}

// keepSnapshot writes a snapshot in upstream's format (through the
// contract's encoders) into the bundle's kept objects at dir, and returns
// the pointer that names it.
func keepSnapshot(t *testing.T, dir string, id batchsnap.ID, c contract.Cursor, segs []batchsnap.SegmentInfo, objs []batchsnap.ObjectEntry) []byte {
	t.Helper()
	a := batchsnap.Artifacts("snapshots/c", id.String())
	write := func(key string, b []byte) {
		p := filepath.Join(dir, KeptSnapshotsDir, filepath.FromSlash(key))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	ident := batchsnap.NewIdentity(id, c, 1)
	segRaw := batchsnap.EncodeSegments(segs)
	write(a.Segments(), segRaw)
	m := batchsnap.Manifest{Identity: ident, Segments: batchsnap.ObjectRef{Key: a.Segments(), StoredSize: uint64(len(segRaw)), CRC32C: batchsnap.CRC32C(segRaw)}}
	if len(objs) > 0 {
		chunk, err := batchsnap.EncodeObjectChunk(batchsnap.ObjectChunk{Objects: objs})
		require.NoError(t, err)
		write(a.ObjectChunk(0), chunk)
		m.ObjectChunks = []batchsnap.ChunkRef{{Key: a.ObjectChunk(0), ObjectCount: uint64(len(objs)), StoredSize: uint64(len(chunk)), CRC32C: batchsnap.CRC32C(chunk)}}
	}
	man, err := m.Encode()
	require.NoError(t, err)
	write(a.Manifest(), man)
	d := batchsnap.Descriptor{Identity: ident, ManifestKey: a.Manifest(), ManifestSize: uint64(len(man)), ManifestCRC32C: batchsnap.CRC32C(man), CreatedAtMS: 1}
	desc, err := d.Encode()
	require.NoError(t, err)
	write(a.Descriptor(), desc)
	ptr, err := batchsnap.PointerTo(d, a.Descriptor(), desc).Encode()
	require.NoError(t, err)
	return ptr
}

// snapshotRun is modelHistory with a snapshot of batch 2 (the segment, a
// and b) published as latest at revision 6, its objects as objs has them
// (nil: as the durable history holds them).
func snapshotRun(t *testing.T, objs []batchsnap.ObjectEntry, segs []batchsnap.SegmentInfo) *Input {
	t.Helper()
	if objs == nil {
		objs = []batchsnap.ObjectEntry{keptObject("a", "10.0.0.1:7000", 0, 100), keptObject("b", "10.0.0.1:7000", 100, 50)}
	}
	if segs == nil {
		segs = []batchsnap.SegmentInfo{keptSegment("10.0.0.1:7000")}
	}
	dir := t.TempDir()
	r := modelHistory()
	ptr := keepSnapshot(t, dir, batchsnap.ID{BatchID: 2, Lease: 9}, contract.Cursor{BatchID: 2, Seq: 3}, segs, objs)
	r.rev++
	r.put(r.ks.SnapshotLatest(), ptr, 0)
	in := r.input()
	in.Dir = dir
	in.Final.Keys = map[string]string{r.ks.SnapshotLatest(): string(ptr)}
	in.Snapshots = []KeptSnapshot{{SnapshotID: "2-9", Pointer: string(ptr), Kept: true, Whole: true, Objects: 4}}
	return in
}

func TestSnapshotContentAcceptsTheModelsState(t *testing.T) {
	in := snapshotRun(t, nil, nil)
	res := SnapshotContent(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["snapshot-content"])
	require.Equal(t, 1, res.Exercised["final-snapshot-judged"])
	require.Contains(t, res.Summary, "1 snapshots kept of 1 named; 1 judged against the model")
}

// Every way a snapshot's content can differ from the durable history
// fails, naming the snapshot, the object or segment and what differs; a
// snapshot whose counts and checksums are consistent is judged by what it
// holds, not by how well it was sealed.
func TestSnapshotContentFailsEveryDifference(t *testing.T) {
	a := keptObject("a", "10.0.0.1:7000", 0, 100)
	b := keptObject("b", "10.0.0.1:7000", 100, 50)
	seg := keptSegment("10.0.0.1:7000")
	otherStatus := b
	otherStatus.Metadata.Replicas = []metadata.ReplicaFields{b.Metadata.Replicas[0]}
	otherStatus.Metadata.Replicas[0].Status = metadata.ReplicaProcessing
	unset := b
	unset.Metadata.HardPinned = batchsnap.PinnedUnset
	for name, tc := range map[string]struct {
		objs []batchsnap.ObjectEntry
		segs []batchsnap.SegmentInfo
		want string
	}{
		"an object dropped":      {[]batchsnap.ObjectEntry{a}, nil, "t/b missing; the durable history holds it (size 50)"},
		"an object invented":     {[]batchsnap.ObjectEntry{a, b, keptObject("z", "10.0.0.1:7000", 200, 5)}, nil, "t/z present (size 5)"},
		"a removed object kept":  {[]batchsnap.ObjectEntry{a, b, keptObject("c", "10.0.0.1:7000", 0, 10)}, nil, "t/c present"},
		"a replica's status":     {[]batchsnap.ObjectEntry{a, otherStatus}, nil, "t/b differs: replica 0"},
		"hard_pinned left unset": {[]batchsnap.ObjectEntry{a, unset}, nil, "t/b differs: hard_pinned_unset true, the model false"},
		"a segment dropped":      {nil, []batchsnap.SegmentInfo{}, "segment 10.0.0.1:7000 missing"},
		"a segment invented":     {nil, []batchsnap.SegmentInfo{seg, keptSegment("10.0.0.2:7000")}, "segment 10.0.0.2:7000 present"},
		"a segment's capacity":   {nil, []batchsnap.SegmentInfo{{SegmentName: "seg", TransportEndpoint: "10.0.0.1:7000", Capacity: 1, IsMemorySegment: true}}, "segment 10.0.0.1:7000 is"},
		"a later object's size":  {[]batchsnap.ObjectEntry{a, keptObject("b", "10.0.0.1:7000", 100, 51)}, nil, "t/b differs: size 51, the model 50"},
		"an object's replica gone": {[]batchsnap.ObjectEntry{a, {TenantID: "t", Key: "b", Metadata: batchsnap.ObjectMetadata{ClientID: b.Metadata.ClientID,
			Size: 50, DataType: metadata.DataUnknown, HardPinned: batchsnap.PinnedFalse}}}, nil, "t/b differs: 0 replicas, the model 1"},
	} {
		t.Run(name, func(t *testing.T) {
			res := SnapshotContent(snapshotRun(t, tc.objs, tc.segs))
			require.False(t, res.Pass)
			require.Contains(t, evidence0(res), "[snapshot-content] 2-9 (named at rev 6) at batch 2 seq 3")
			require.Contains(t, evidence0(res), tc.want)
		})
	}
}

// A kept snapshot that does not decode fails, unless a fault damaged it;
// a final pointer's snapshot must be judged unless damaged or over the
// bundle's budget.
func TestSnapshotContentFailsWhatItCannotJudge(t *testing.T) {
	damage := func(in *Input) {
		p := filepath.Join(in.Dir, KeptSnapshotsDir, filepath.FromSlash(batchsnap.Artifacts("snapshots/c", "2-9").ObjectChunk(0)))
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		raw[len(raw)-1] ^= 1
		require.NoError(t, os.WriteFile(p, raw, 0o644))
	}
	in := snapshotRun(t, nil, nil)
	damage(in)
	res := SnapshotContent(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[snapshot-decodes] 2-9 (named at rev 6)")
	require.Contains(t, evidence0(res), "CRC32C")
	require.Contains(t, evidence0(res), "[final-snapshot-judged] the final latest names 2-9")

	in.Events = []Event{{Kind: "fault", Corrupted: []string{"2-9"}}}
	res = SnapshotContent(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["not judged: damaged by a fault"])

	// A chunk a correct collector removed while a copy that did not end
	// whole was made is not judged; the same gap in a whole copy fails.
	in = snapshotRun(t, nil, nil)
	in.Final.Keys = nil
	require.NoError(t, os.Remove(filepath.Join(in.Dir, KeptSnapshotsDir, filepath.FromSlash(batchsnap.Artifacts("snapshots/c", "2-9").ObjectChunk(0)))))
	res = SnapshotContent(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "object not found")
	in.Snapshots[0].Whole = false
	res = SnapshotContent(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["not judged: collected while it was copied"])

	in = snapshotRun(t, nil, nil)
	in.Snapshots[0] = KeptSnapshot{SnapshotID: "2-9", Pointer: in.Snapshots[0].Pointer, Error: "connection refused"}
	res = SnapshotContent(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "whose content was not judged: not kept: connection refused")
	in.Snapshots[0].OverBudget = true
	res = SnapshotContent(in)
	require.True(t, res.Pass, evidence0(res))
	require.Contains(t, res.Summary, "1 not kept: over the bundle's budget")

	in.Snapshots, in.Objects = nil, &StoreReport{} // a run with a store, a bundle without the record
	res = SnapshotContent(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "snapshot contents cannot be judged")
}

// A snapshot whose cursor the durable prefix had not reached when its
// pointer was put captured what was never durable.
func TestSnapshotContentFailsASnapshotAheadOfTheDurablePrefix(t *testing.T) {
	dir := t.TempDir()
	r := modelHistory()
	objs := []batchsnap.ObjectEntry{keptObject("b", "10.0.0.1:7000", 100, 50), keptObject("c", "10.0.0.1:7000", 0, 10)}
	ptr := keepSnapshot(t, dir, batchsnap.ID{BatchID: 5, Lease: 9}, contract.Cursor{BatchID: 5, Seq: 6},
		[]batchsnap.SegmentInfo{keptSegment("10.0.0.1:7000")}, objs)
	r.rev++
	r.put(r.ks.SnapshotLatest(), ptr, 0)
	in := r.input()
	in.Dir = dir
	in.Snapshots = []KeptSnapshot{{SnapshotID: "5-9", Pointer: string(ptr), Kept: true, Whole: true}}
	res := SnapshotContent(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "5-9 at batch 5 seq 6: the durable prefix was never at its cursor before its pointer was put (rev 6)")
}

// A legacy import's snapshot is judged against the fixture's digest; once
// it is, it is the model's start, so recovered-state and convergence judge
// the nodes of an imported history.
func TestSnapshotContentJudgesTheImportAgainstTheFixture(t *testing.T) {
	dir := t.TempDir()
	objs := []batchsnap.ObjectEntry{keptObject("k", "10.0.0.1:7000", 0, 100), keptObject("x", "10.0.0.1:7000", 100, 5)}
	segs := []batchsnap.SegmentInfo{keptSegment("10.0.0.1:7000")}
	ptr := keepSnapshot(t, dir, batchsnap.ID{BatchID: 1, Lease: 7}, contract.Cursor{BatchID: 1, Seq: importSeq}, segs, objs)
	r := importHistory(t, nil) // batches 2 and 3: REMOVE t/k each
	for i, e := range r.events {
		if e.Key == r.ks.SnapshotLatest() {
			r.events[i].Value = ptr
		}
	}
	in := r.input()
	in.Dir = dir
	in.Snapshots = []KeptSnapshot{{SnapshotID: "1-7", Pointer: string(ptr), Kept: true, Whole: true}}

	// The fixture's digest is computed apart from the snapshot: here, the
	// model's digest of the content the fixture holds.
	p, err := batchsnap.DecodePointer(ptr)
	require.NoError(t, err)
	base, err := model.ReadSnapshot(context.Background(), KeptStore(dir), p)
	require.NoError(t, err)
	in.Base = &Base{Fixture: "small", Digest: base.Digest(), Segments: 1,
		Objects: []BaseObject{{Tenant: "t", Key: "k", Size: 100}, {Tenant: "t", Key: "x", Size: 5}}}
	res := SnapshotContent(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["import-snapshot-content"])

	// The nodes are judged against the import's content and the batches
	// after it: k removed, x stays.
	_, s, err := finalState(in)
	require.NoError(t, err)
	n, _ := s.Len()
	require.Equal(t, 1, n)
	node := Node{Name: "master-0", Running: true}
	node.State.Cursor.BatchID, node.State.Cursor.Seq = s.Cursor().BatchID, s.Cursor().Seq
	node.State.Digest = "sha256:wrong"
	in.Nodes = []Node{node}
	res = RecoveredState(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[recovered-equals-model] master-0 at batch 3")

	// An import whose snapshot is not the fixture's content fails, and is
	// no start: the audits that need one fail rather than pass.
	in.Base.Digest = "sha256:fixture"
	in.Nodes = nil
	res = SnapshotContent(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[import-snapshot-content] 1-7: the imported snapshot's content has digest")
	_, _, err = finalState(in)
	require.ErrorContains(t, err, "is not the fixture's content")
	in.Base.Objects = in.Base.Objects[:1]
	res = SnapshotContent(in)
	require.Contains(t, evidence0(res), "holds 2 objects and 1 segments, the fixture 1 and 1")
}
