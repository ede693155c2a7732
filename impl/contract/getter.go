package contract

import (
	"context"
	"io"
)

// ObjectGetter is how the contract's snapshot readers reach an object
// store: one GET by exact key, returning the object's bytes and its stored
// size (-1 when the store does not say). The contract does no I/O of its
// own; the caller's store does it (impl/objstore's Getter adapts a Store).
type ObjectGetter interface {
	GetObject(ctx context.Context, key string) (rc io.ReadCloser, size int64, err error)
}
