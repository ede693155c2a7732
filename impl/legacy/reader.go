package legacy

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/state"
)

// The layout's names and reading rules are the contract's
// (impl/contract/legacysnap): the harness reads a legacy root through it
// too. These keep the implementation's callers as they were.
const (
	SnapshotRootBase  = legacysnap.SnapshotRootBase
	LatestObject      = legacysnap.LatestObject
	DescriptorObject  = legacysnap.DescriptorObject
	ManifestObject    = legacysnap.ManifestObject
	MetadataObject    = legacysnap.MetadataObject
	SegmentsObject    = legacysnap.SegmentsObject
	TaskManagerObject = legacysnap.TaskManagerObject
)

// CheckID validates a legacy snapshot id (legacysnap.CheckID). Failures are
// ErrID.
func CheckID(id string) error { return legacysnap.CheckID(id) }

// File is one file of a snapshot as read.
type File = legacysnap.File

// Source is where legacy snapshots live: an object store read by exact
// keys, and the root under it ("" for the store's top) that upstream's
// master used as its object store root. Snapshots of cluster C are under
// {Root}/mooncake_master_snapshot/C/.
type Source struct {
	Store objstore.Store
	Root  string
}

// Snapshot is one legacy snapshot, read and decoded whole by the contract's
// reader, and after Convert the state an import brings in.
type Snapshot struct {
	*legacysnap.Snapshot

	// Set by Convert: the import, at ImportCursor(Seq).
	Objects  int
	Segments int
	State    *state.State
}

// ImportCursor is where an imported snapshot sits in the new OpLog: batch 1,
// at the legacy sequence (at least 1, so that the cursor is consistent; a
// snapshot-only cluster recorded no sequence at all). The next batch the new
// primary appends is 2, starting at the sequence after it.
func ImportCursor(seq uint64) state.Cursor {
	return state.Cursor{BatchID: 1, Seq: max(seq, 1)}
}

// getter is an object store as the contract's reader gets objects.
type getter struct{ store objstore.Store }

func (g getter) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, _, err := g.store.Get(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, fmt.Errorf("%w in %s", legacysnap.ErrNotFound, g.store.Name())
	}
	return rc, err
}

func (s Source) contract() legacysnap.Source {
	return legacysnap.Source{Store: getter{s.Store}, Root: s.Root}
}

// Latest reads latest.txt: the id upstream's catalog marked newest. Only an
// explicit import consults it.
func (s Source) Latest(ctx context.Context, clusterID string) (string, error) {
	return s.contract().Latest(ctx, clusterID)
}

// LatestFile is Latest with the file as read.
func (s Source) LatestFile(ctx context.Context, clusterID string) (string, File, error) {
	return s.contract().LatestFile(ctx, clusterID)
}

// Read reads snapshot id of clusterID whole and decodes it as upstream's
// decoder does (legacysnap.Source.Read). Any failure wraps one of the
// package's typed errors, names the file and the place in it, and yields no
// snapshot.
func (s Source) Read(ctx context.Context, clusterID, id string) (*Snapshot, error) {
	snap, err := s.contract().Read(ctx, clusterID, id)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Snapshot: snap}, nil
}

// Open reads snapshot id (Read) and converts it into the state model
// (Convert): a snapshot Open returns is ready to import.
func (s Source) Open(ctx context.Context, clusterID, id string) (*Snapshot, error) {
	snap, err := s.Read(ctx, clusterID, id)
	if err != nil {
		return nil, err
	}
	if err := snap.Convert(); err != nil {
		return nil, err
	}
	return snap, nil
}
