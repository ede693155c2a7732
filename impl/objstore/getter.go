package objstore

import (
	"context"
	"io"

	"github.com/oplogha/oplogha/impl/contract"
)

// Getter is st as the contract's snapshot readers take a store
// (contract.ObjectGetter: a GET by exact key and the stored size).
func Getter(st Store) NamedGetter { return getter{st} }

// NamedGetter is a contract.ObjectGetter that says which store it reads.
type NamedGetter interface {
	contract.ObjectGetter
	Name() string
}

type getter struct{ st Store }

func (g getter) Name() string { return g.st.Name() }

func (g getter) GetObject(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	rc, info, err := g.st.Get(ctx, key)
	return rc, info.Size, err
}
