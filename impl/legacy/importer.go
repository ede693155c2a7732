package legacy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/retention"
	"github.com/oplogha/oplogha/impl/snapshot"
)

// Namespace is what an importer finds in etcd before it imports.
type Namespace struct {
	// Marker is the import already recorded there (nil: none).
	Marker *Marker
	// Fresh: the durable prefix is absent or zero, and there is no batch,
	// pointer, floor or import record — the only state an import goes into.
	Fresh bool
	// Residue says what makes it not fresh.
	Residue []string
	// Revision the namespace was read at.
	Revision int64
}

// ReadNamespace reads, in one linearizable request, every key an import
// depends on.
func ReadNamespace(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) (Namespace, error) {
	resp, err := kv.Txn(ctx).Then(
		clientv3.OpGet(ks.DurablePrefix()),
		clientv3.OpGet(ks.BatchPrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly()),
		clientv3.OpGet(ks.SnapshotLatest()),
		clientv3.OpGet(ks.SnapshotFallback()),
		clientv3.OpGet(ks.CompactionFloor()),
		clientv3.OpGet(ks.LegacyImport()),
	).Commit()
	if err != nil {
		return Namespace{}, fmt.Errorf("read namespace %s: %w", ks.Root(), err)
	}
	ns := Namespace{Revision: resp.Header.Revision}
	get := func(i int) []byte {
		if kvs := resp.Responses[i].GetResponseRange().Kvs; len(kvs) > 0 {
			return kvs[0].Value
		}
		return nil
	}
	if v := get(0); v != nil {
		p, err := oplog.DecodeDurablePrefix(v)
		switch {
		case err != nil:
			ns.Residue = append(ns.Residue, fmt.Sprintf("durable prefix unreadable (%v)", err))
		case p.BatchID != 0:
			ns.Residue = append(ns.Residue, fmt.Sprintf("durable prefix at batch %d", p.BatchID))
		}
	}
	if n := resp.Responses[1].GetResponseRange().Count; n > 0 {
		ns.Residue = append(ns.Residue, fmt.Sprintf("%d batch keys", n))
	}
	for i, name := range map[int]string{2: "latest pointer", 3: "fallback pointer", 4: "compaction floor"} {
		if get(i) != nil {
			ns.Residue = append(ns.Residue, name)
		}
	}
	if v := get(5); v != nil {
		m, err := DecodeMarker(v)
		if err != nil {
			return ns, fmt.Errorf("%s: %w", ks.LegacyImport(), err)
		}
		ns.Marker = &m
		ns.Residue = append(ns.Residue, "an import record")
	}
	ns.Fresh = len(ns.Residue) == 0
	return ns, nil
}

// Importer converts one legacy snapshot into a schema-v1 snapshot and
// installs it. It runs on a primary that has claimed producer view View and
// not yet appended anything.
type Importer struct {
	Client   *clientv3.Client
	Keyspace keyspace.Keyspace
	Store    objstore.Store
	Trust    objstore.Trust
	Prefix   string // {s3_prefix}/{cluster_id}: the snapshot root, snapshots under <root>/batch-oplog/<id>/
	WorkDir  string
	Node     string
	View     uint64
	// ChunkObjects is the objects per snapshot chunk (default
	// snapshot.DefaultChunkObjects).
	ChunkObjects int
	// AfterWrite, when set, runs after the converted snapshot is written and
	// verified and before the transaction: a crash window.
	AfterWrite func()
	// Now stamps the record (default time.Now).
	Now func() time.Time
}

// Imported is a committed import.
type Imported struct {
	Marker   Marker
	Pointer  publish.Pointer
	Revision int64
	Proofs   map[string]objstore.Proof
}

// Import installs snap, read from legacyCluster, as the namespace's first
// state. Under the maintenance lease it writes the snapshot at
// ImportCursor(snap.Seq) — create-only and verified like any publication —
// then commits one transaction that compares the lease token, this primary's
// producer view, the zero durable prefix and the absence of every batch,
// pointer, floor and import record, and puts the latest pointer, the
// compaction floor at 1, batch 1 (ImportBatch: the durable prefix's terminal
// batch, as upstream's startup check requires), the durable prefix at the
// import cursor and the import record. The floor at 1 says that the OpLog
// from batch 1 is no recovery source (it would need the legacy state): a
// reader below the floor rebootstraps from the pointer. A failure leaves etcd
// as it was; objects already written are orphans for GC.
func (im Importer) Import(ctx context.Context, legacyCluster string, snap *Snapshot) (Imported, error) {
	ns, err := ReadNamespace(ctx, im.Client, im.Keyspace)
	if err != nil {
		return Imported{}, err
	}
	if ns.Marker != nil {
		return Imported{}, fmt.Errorf("%w: %s was imported at %s as %s", ErrOtherImport, ns.Marker.LegacySnapshotID,
			time.UnixMilli(ns.Marker.ImportedAtMS).UTC().Format(time.RFC3339), ns.Marker.SnapshotID)
	}
	if !ns.Fresh {
		return Imported{}, fmt.Errorf("%w: %s holds %s", ErrNamespaceNotEmpty, im.Keyspace.Root(), strings.Join(ns.Residue, ", "))
	}
	lease, err := publish.AcquireLease(ctx, im.Client, im.Keyspace, im.Node, 60)
	if err != nil {
		return Imported{}, fmt.Errorf("legacy import: %w", err)
	}
	defer func() { _ = lease.Release(context.WithoutCancel(ctx)) }()

	now := time.Now
	if im.Now != nil {
		now = im.Now
	}
	cur := snap.State.Cursor()
	id := snapshot.NewID(cur.BatchID, int64(lease.ID))
	chunk := im.ChunkObjects
	if chunk <= 0 {
		chunk = snapshot.DefaultChunkObjects
	}
	prep, err := snapshot.Prepare(snap.State.Capture(), snapshot.PrepareSpec{Root: im.Prefix, ID: id, View: int64(im.View), WorkDir: im.WorkDir,
		ChunkObjects: chunk, CreatedAt: now()})
	if err != nil {
		return Imported{}, fmt.Errorf("legacy import: encode: %w", err)
	}
	defer prep.Close()
	w, err := snapshot.Write(ctx, im.Store, im.Trust, prep, snapshot.WriteOptions{})
	if err != nil {
		return Imported{}, fmt.Errorf("legacy import: upload %s (left as an orphan): %w", id, err)
	}
	if im.AfterWrite != nil {
		im.AfterWrite()
	}
	ptr := w.Pointer
	enc, err := ptr.Encode()
	if err != nil {
		return Imported{}, err
	}
	rec, err := batchlog.EncodeBatch(ImportBatch(cur))
	if err != nil {
		return Imported{}, fmt.Errorf("legacy import: batch %d: %w", cur.BatchID, err)
	}
	n, s := snap.State.Len()
	mk := Marker{SchemaVersion: MarkerSchemaVersion, LegacyClusterID: legacyCluster, LegacySnapshotID: snap.ID, LegacySeq: snap.Seq,
		LegacyProducerView: snap.ProducerView, LegacyCreatedAtMS: snap.CreatedAtMS, SnapshotID: id.String(), BatchID: cur.BatchID,
		LastSeq: cur.Seq, ProducerView: im.View, Objects: n, Segments: s, StateDigest: string(snap.State.Digest()),
		ImportedAtMS: now().UnixMilli(), ImportedBy: im.Node}
	ks := im.Keyspace
	absent := func(key string) clientv3.Cmp { return clientv3.Compare(clientv3.CreateRevision(key), "=", 0) }
	resp, err := im.Client.Txn(ctx).If(
		clientv3.Compare(clientv3.Value(ks.SnapshotMaintenance()), "=", lease.Token),
		clientv3.Compare(clientv3.Value(ks.ProducerView()), "=", string(oplog.EncodeProducerView(im.View))),
		clientv3.Compare(clientv3.Value(ks.DurablePrefix()), "=", string(oplog.DurablePrefix{}.Encode())),
		absent(ks.BatchPrefix()).WithPrefix(),
		absent(ks.SnapshotLatest()), absent(ks.SnapshotFallback()), absent(ks.CompactionFloor()), absent(ks.LegacyImport()),
	).Then(
		clientv3.OpPut(ks.SnapshotLatest(), string(enc)),
		retention.InitialFloorOp(ks, cur.BatchID),
		clientv3.OpPut(ks.Batch(cur.BatchID), string(rec)),
		clientv3.OpPut(ks.DurablePrefix(), string(oplog.DurablePrefix{BatchID: cur.BatchID, LastSeq: cur.Seq}.Encode())),
		clientv3.OpPut(ks.LegacyImport(), string(mk.Encode())),
	).Commit()
	if err != nil {
		return Imported{}, fmt.Errorf("legacy import transaction (outcome unknown; the import record tells): %w", err)
	}
	if !resp.Succeeded {
		why := "the maintenance lease, the producer view or the namespace changed"
		if ns, err := ReadNamespace(ctx, im.Client, im.Keyspace); err == nil && !ns.Fresh {
			why = "the namespace now holds " + strings.Join(ns.Residue, ", ")
		}
		return Imported{}, fmt.Errorf("%w: %s; snapshot %s is an orphan", ErrImportRace, why, id)
	}
	return Imported{Marker: mk, Pointer: ptr, Revision: resp.Header.Revision, Proofs: w.Proofs}, nil
}
