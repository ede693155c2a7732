package legacy

import "errors"

// Errors an import branches on. Every failure of Open wraps exactly one of
// the first six; nothing is written anywhere before Open has succeeded.
var (
	ErrNotFound   = errors.New("legacy snapshot object not found")
	ErrID         = errors.New("legacy snapshot id malformed")
	ErrDescriptor = errors.New("legacy descriptor malformed")
	ErrManifest   = errors.New("legacy manifest mismatch")
	ErrTruncated  = errors.New("legacy snapshot truncated")
	ErrMalformed  = errors.New("legacy snapshot malformed")
	// ErrContent: the rows decode but do not form a valid state (a replica on
	// an unknown segment, a duplicate key, an empty replica list…).
	ErrContent = errors.New("legacy snapshot content invalid")

	// ErrNamespaceNotEmpty: an import only goes into a fresh namespace.
	ErrNamespaceNotEmpty = errors.New("namespace is not empty: a legacy snapshot is imported only into a fresh namespace")
	// ErrOtherImport: the namespace already holds a different import.
	ErrOtherImport = errors.New("namespace already holds another legacy import")
	// ErrImportRace: the import transaction's comparisons failed (the lease,
	// the producer view or the namespace changed under it); nothing was written
	// to etcd and the converted snapshot is an orphan for GC.
	ErrImportRace = errors.New("legacy import transaction lost a race")
)
