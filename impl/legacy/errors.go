package legacy

import (
	"errors"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

// Errors an import branches on. Every failure of Read that the snapshot
// causes (not the store: an I/O error is wrapped as it comes) wraps exactly
// one of the first seven, which are the contract's reader's
// (impl/contract/legacysnap), and a failure of Convert one of ErrContent and
// ErrNotImportable; nothing is written anywhere before Open has succeeded.
var (
	ErrNotFound   = legacysnap.ErrNotFound
	ErrID         = legacysnap.ErrID
	ErrDescriptor = legacysnap.ErrDescriptor
	ErrManifest   = legacysnap.ErrManifest
	ErrTruncated  = legacysnap.ErrTruncated
	ErrMalformed  = legacysnap.ErrMalformed
	// ErrContent: the files decode but do not form a consistent state (a
	// duplicate key, a replica past its segment, a replica id not below
	// replica_next_id…).
	ErrContent = legacysnap.ErrContent
	// ErrNotImportable: the snapshot is what upstream wrote, but importing it
	// would lose state or invent it: upstream's decoder drops some of its
	// objects (a memory replica on a segment that is draining, unmounted or
	// without an allocator), a segment is not OK, two segments share a
	// transport endpoint, or a replica has a status the state model does not
	// have. See the package doc.
	ErrNotImportable = errors.New("legacy snapshot not importable")

	// ErrNamespaceNotEmpty: an import only goes into a fresh namespace.
	ErrNamespaceNotEmpty = errors.New("namespace is not empty: a legacy snapshot is imported only into a fresh namespace")
	// ErrOtherImport: the namespace already holds a different import.
	ErrOtherImport = errors.New("namespace already holds another legacy import")
	// ErrImportRace: the import transaction's comparisons failed (the lease,
	// the producer view or the namespace changed under it); nothing was written
	// to etcd and the converted snapshot is an orphan for GC.
	ErrImportRace = errors.New("legacy import transaction lost a race")
)
