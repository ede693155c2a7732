package master

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/objstore/s3"
	"github.com/oplogha/oplogha/impl/oplog"
)

// errRefused marks an error that ends the process rather than a term: the
// operator asked for something this namespace cannot give (a legacy import
// into a namespace that already holds data, or that holds another import).
type errRefused struct{ err error }

func (e errRefused) Error() string { return e.err.Error() }
func (e errRefused) Unwrap() error { return e.err }

// legacyRefusal reports whether err is an operator-input failure of a legacy
// import: the snapshot is unreadable or invalid, or the namespace is not one
// an import may go into. Waiting does not fix these; the process exits.
func legacyRefusal(err error) bool {
	for _, e := range []error{legacy.ErrNotFound, legacy.ErrID, legacy.ErrDescriptor, legacy.ErrManifest, legacy.ErrTruncated,
		legacy.ErrMalformed, legacy.ErrContent, legacy.ErrNotImportable, legacy.ErrNamespaceNotEmpty, legacy.ErrOtherImport} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// legacySource opens the configured legacy root, read by exact keys only.
func (m *Master) legacySource() (legacy.Source, error) {
	root := m.cfg.LegacyImportRoot
	if rest, ok := strings.CutPrefix(root, "s3://"); ok {
		bucket, prefix, _ := strings.Cut(rest, "/")
		sc, err := m.cfg.s3Config(bucket)
		if err != nil {
			return legacy.Source{}, err
		}
		st, err := s3.New(sc)
		if err != nil {
			return legacy.Source{}, err
		}
		return legacy.Source{Store: st, Root: strings.Trim(prefix, "/")}, nil
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return legacy.Source{}, fmt.Errorf("%w: legacy_import_root %s is not a directory", legacy.ErrNotFound, root)
	}
	return legacy.Source{Store: &localdir.Store{Root: root}}, nil
}

// prepareLegacyImport runs at startup in legacy-import mode, before this
// node bootstraps or campaigns. A namespace that already records the import
// needs nothing (pointer mode from then on). A fresh one gets the legacy
// snapshot read and validated whole now, so a broken snapshot stops the
// process with one clear line before anything is written; it is imported
// when this node first becomes primary. Any other namespace is refused.
func (m *Master) prepareLegacyImport(ctx context.Context) error {
	var ns legacy.Namespace
	for {
		var err error
		if ns, err = legacy.ReadNamespace(ctx, m.cli, m.ks); err == nil || legacyRefusal(err) || ctx.Err() != nil {
			if err != nil {
				return err
			}
			break
		}
		m.log.Warn("legacy import: namespace unreadable, retrying", "phase", "legacy_import", "code", "etcd_unavailable", "err", err)
		sleep(ctx, 2*time.Second)
	}
	want := m.cfg.LegacyImportSnapshotID
	if ns.Marker != nil {
		if want != "" && want != ns.Marker.LegacySnapshotID {
			return fmt.Errorf("%w: %s holds the import of %s, configured %s", legacy.ErrOtherImport, m.ks.Root(), ns.Marker.LegacySnapshotID, want)
		}
		m.m.legacyImports.WithLabelValues("already_imported").Inc()
		m.log.Info("legacy snapshot already imported; pointer mode", "phase", "legacy_import", "legacy_snapshot_id", ns.Marker.LegacySnapshotID,
			"snapshot_id", ns.Marker.SnapshotID, "imported_by", ns.Marker.ImportedBy)
		return nil
	}
	if !ns.Fresh {
		return fmt.Errorf("%w: %s holds %s", legacy.ErrNamespaceNotEmpty, m.ks.Root(), strings.Join(ns.Residue, ", "))
	}
	src, err := m.legacySource()
	if err != nil {
		return err
	}
	id := want
	if id == "" {
		if id, err = src.Latest(ctx, m.cfg.legacyClusterID()); err != nil {
			return err
		}
	}
	start := time.Now()
	snap, err := src.Open(ctx, m.cfg.legacyClusterID(), id)
	if err != nil {
		m.m.legacyImports.WithLabelValues("failed").Inc()
		return err
	}
	m.legacy = snap
	m.log.Info("legacy snapshot read; imported when this node first becomes primary", "phase", "legacy_import", "legacy_snapshot_id", snap.ID,
		"legacy_seq", snap.Seq, "objects", snap.Objects, "segments", snap.Segments, "left_behind", legacy.LeftBehind(snap.Decoded),
		"read_ms", time.Since(start).Milliseconds())
	return nil
}

// importLegacy imports the pending legacy snapshot as the first primary of
// view. Another node may have imported it first (the same id): then this node
// simply catches up like any standby. An import of another snapshot, or data
// written meanwhile, is a refusal that ends the process.
func (m *Master) importLegacy(ctx context.Context, view uint64) error {
	snap := m.legacy
	ns, err := legacy.ReadNamespace(ctx, m.cli, m.ks)
	if err != nil {
		return err
	}
	if ns.Marker != nil && ns.Marker.LegacySnapshotID == snap.ID {
		m.legacy = nil
		m.log.Info("legacy snapshot imported by another node", "phase", "legacy_import", "legacy_snapshot_id", snap.ID, "imported_by", ns.Marker.ImportedBy)
		return nil
	}
	trust, ready := m.storeTrust()
	if !ready {
		return fmt.Errorf("legacy import: the snapshot store has not answered yet")
	}
	start := time.Now()
	res, err := legacy.Importer{Client: m.cli, Keyspace: m.ks, Store: m.store, Trust: trust, Prefix: m.storePrefix(), WorkDir: m.workDir(),
		Node: m.cfg.nodeID(), View: view, AfterWrite: func() { hit(fpLegacyImportAfterWrite) }}.Import(ctx, m.cfg.legacyClusterID(), snap)
	if err != nil {
		m.m.legacyImports.WithLabelValues("failed").Inc()
		m.m.orphans.WithLabelValues("legacy_import_failed").Inc()
		if legacyRefusal(err) {
			return errRefused{err}
		}
		return err
	}
	hit(fpLegacyImportAfterCommit)
	cur := snap.State.Cursor()
	m.mu.Lock()
	m.st = snap.State
	m.mu.Unlock()
	m.legacy = nil
	m.noteApplied(cur)
	m.noteDurable(oplog.DurablePrefix{BatchID: cur.BatchID, LastSeq: cur.Seq})
	m.roleMu.Lock()
	m.boot.LegacyImport = snap.ID
	m.roleMu.Unlock()
	m.m.legacyImports.WithLabelValues("imported").Inc()
	m.m.legacyImportSeconds.Set(time.Since(start).Seconds())
	m.m.latestSnapshotBatch.Set(float64(cur.BatchID))
	m.log.Info("legacy snapshot imported", "phase", "legacy_import", "legacy_snapshot_id", snap.ID, "snapshot_id", res.Marker.SnapshotID,
		"cursor", cur.String(), "producer_view", view, "objects", res.Marker.Objects, "segments", res.Marker.Segments,
		"state_digest", res.Marker.StateDigest, "revision", res.Revision, "descriptor_key", res.Pointer.DescriptorKey,
		"duration_ms", time.Since(start).Milliseconds())
	return nil
}
