package audit

import (
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/history"
)

const importSeq = 5000

func importPointer(t *testing.T) (batchsnap.Pointer, []byte) {
	t.Helper()
	id := batchsnap.ID{BatchID: 1, Lease: 7}
	p := batchsnap.Pointer{PointerSchemaVersion: batchsnap.PointerSchemaVersion, SnapshotID: id.String(), LastIncludedBatchID: 1, LastIncludedSeq: importSeq,
		ProducerViewVersion: 1, DescriptorKey: batchsnap.Artifacts("p", id.String()).Descriptor(), DescriptorSize: 10, CreatedAtMS: 1}
	b, err := p.Encode()
	require.NoError(t, err)
	return p, b
}

func importMarker(p batchsnap.Pointer) legacysnap.ImportRecord {
	return legacysnap.ImportRecord{SchemaVersion: 1, LegacyClusterID: "old", LegacySnapshotID: "20260620_143012_007", LegacySeq: importSeq, SnapshotID: p.SnapshotID,
		BatchID: 1, LastSeq: importSeq, ProducerView: 1, Objects: 2, Segments: 1, StateDigest: "sha256:aa", ImportedAtMS: 1, ImportedBy: "master-0"}
}

// importHistory: claim view 1 (zero prefix), the import revision, then two
// appends. edit may change the marker and the batch the import writes (nil:
// none), and skip the floor or the latest pointer.
func importHistory(t *testing.T, edit func(r *revs, m *legacysnap.ImportRecord, b1 **batchlog.Batch) (skipFloor, skipLatest bool)) *revs {
	r := newRevs()
	r.claim(1)
	r.lease(7) // the importing primary holds the maintenance lease
	p, ptr := importPointer(t)
	m := importMarker(p)
	b := legacysnap.ImportBatch(p.Cursor())
	b1 := &b
	skipFloor, skipLatest := false, false
	if edit != nil {
		skipFloor, skipLatest = edit(r, &m, &b1)
	}
	r.rev++
	if !skipLatest {
		r.put(r.ks.SnapshotLatest(), ptr, 0)
	}
	if !skipFloor {
		r.put(r.ks.CompactionFloor(), batchsnap.Floor{BatchID: 1}.Encode(), 0)
	}
	if b1 != nil {
		rec, err := batchlog.EncodeBatch(*b1)
		require.NoError(t, err)
		r.put(r.ks.Batch(b1.ID), rec, 0)
	}
	r.prefix = batchlog.DurablePrefix{BatchID: 1, LastSeq: importSeq}
	r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(r.prefix), 0)
	r.put(r.ks.LegacyImport(), m.Encode(), 0)
	r.appendBatch()
	r.appendBatch()
	return r
}

func TestKeyspaceOrderAcceptsAnImport(t *testing.T) {
	r := importHistory(t, nil)
	res := KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
	require.True(t, res.Pass, evidence0(res))
	require.Contains(t, res.Summary, "1 legacy import")
	// Batch 1 is at the floor: once the prefix has moved past it, a fenced
	// prune deletes it like any other.
	r.deleteBatches(1, 1)
	res = KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["delete-under-floor"])

	for name, tc := range map[string]struct {
		edit func(r *revs, m *legacysnap.ImportRecord, b1 **batchlog.Batch) (bool, bool)
		want string
	}{
		"without the floor":  {func(*revs, *legacysnap.ImportRecord, **batchlog.Batch) (bool, bool) { return true, false }, "did not publish the compaction floor"},
		"without the latest": {func(*revs, *legacysnap.ImportRecord, **batchlog.Batch) (bool, bool) { return false, true }, "did not publish the latest pointer"},
		"without batch 1": {func(_ *revs, _ *legacysnap.ImportRecord, b1 **batchlog.Batch) (bool, bool) {
			*b1 = nil
			return false, false
		}, "legacy import wrote 0 batch keys, want exactly batch 1"},
		"batch 1 ending elsewhere": {func(_ *revs, _ *legacysnap.ImportRecord, b1 **batchlog.Batch) (bool, bool) {
			*b1 = &batchlog.Batch{ID: 1, FirstSeq: importSeq - 1, LastSeq: importSeq - 1, Entries: []batchlog.Entry{{Op: batchlog.OpLeaseRenew}}}
			return false, false
		}, "legacy import wrote batch 1 seq 4999..4999 with 1 entries, want batch 1 seq 5000..5000"},
		"batch 1 that applies": {func(_ *revs, _ *legacysnap.ImportRecord, b1 **batchlog.Batch) (bool, bool) {
			*b1 = &batchlog.Batch{ID: 1, FirstSeq: importSeq, LastSeq: importSeq, Entries: []batchlog.Entry{{Op: batchlog.OpRemove, Tenant: "t", Key: "k"}}}
			return false, false
		}, "want batch 1 seq 5000..5000 with its one entry"},
		"record at another seq": {func(_ *revs, m *legacysnap.ImportRecord, _ **batchlog.Batch) (bool, bool) {
			m.LastSeq = 4999
			return false, false
		}, "without moving the durable prefix to batch 1 seq 4999"},
		"after batches were written": {func(r *revs, _ *legacysnap.ImportRecord, _ **batchlog.Batch) (bool, bool) {
			r.appendBatch()
			return false, false
		}, "legacy import recorded after the durable prefix reached batch 1"},
	} {
		t.Run(name, func(t *testing.T) {
			res := KeyspaceOrder(&Input{ClusterID: "c", Etcd: importHistory(t, tc.edit).events})
			require.False(t, res.Pass)
			require.Contains(t, evidence0(res), tc.want)
		})
	}
	// A second record, later.
	r = importHistory(t, nil)
	p, _ := importPointer(t)
	r.rev++
	r.put(r.ks.LegacyImport(), importMarker(p).Encode(), 0)
	res = KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "a second legacy import record written")
}

func TestLegacyImportAudit(t *testing.T) {
	base := &Base{Fixture: "fixtures/legacy/x", LegacySnapshotID: "20260620_143012_007", LegacySeq: importSeq, Digest: "sha256:aa", Segments: 1,
		Objects: []BaseObject{{Tenant: "t", Key: "legacy/1", Size: 10}, {Tenant: "t", Key: "legacy/2", Size: 20}}}
	imported := importHistory(t, nil).events
	res := LegacyImport(&Input{ClusterID: "c", Etcd: imported, Base: base})
	require.True(t, res.Pass, evidence0(res))
	require.Contains(t, res.Summary, "imported as ")

	res = LegacyImport(&Input{ClusterID: "c", Etcd: goodHistory().events})
	require.True(t, res.Pass, "no import asked, none done")
	res = LegacyImport(&Input{ClusterID: "c", Etcd: imported})
	require.False(t, res.Pass, "an import nobody asked for")
	res = LegacyImport(&Input{ClusterID: "c", Etcd: goodHistory().events, Base: base})
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "was never imported")

	other := *base
	other.Digest = "sha256:bb"
	res = LegacyImport(&Input{ClusterID: "c", Etcd: imported, Base: &other})
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "imported content has digest sha256:aa, the fixture's is sha256:bb")
}

// Imported objects are acknowledged before the history: each must survive,
// and none of them is "invented".
func TestAcknowledgedDataWithABase(t *testing.T) {
	base := &Base{LegacySnapshotID: "20260620_143012_007", Objects: []BaseObject{{Tenant: "t", Key: "legacy/1", Size: 10}}}
	ops := []history.Op{op(history.Put, "new", history.OK, 1, 2)}
	r := AcknowledgedData(&Input{Ops: ops, Base: base, Nodes: []Node{nodeWith(map[string]uint64{"legacy/1": 10, "new": 10})}})
	require.True(t, r.Pass, evidence0(r))
	r = AcknowledgedData(&Input{Ops: ops, Base: base, Nodes: []Node{nodeWith(map[string]uint64{"new": 10})}})
	require.False(t, r.Pass)
	require.Contains(t, evidence0(r), "legacy/1 missing: put acknowledged")
	require.Contains(t, evidence0(r), "legacy import of 20260620_143012_007")
	r = AcknowledgedData(&Input{Ops: ops, Nodes: []Node{nodeWith(map[string]uint64{"legacy/1": 10, "new": 10})}})
	require.False(t, r.Pass, "without the base the same object is invented")
}
