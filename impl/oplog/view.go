package oplog

import (
	"math"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

// MaxProducerView is the highest producer view: upstream's ViewVersionId is
// a positive int64.
const MaxProducerView = math.MaxInt64

// EncodeProducerView is upstream's producer view record for view, its
// decimal. A view outside 1..MaxProducerView has no record (no claim makes
// one) and encodes as nil, which no stored view equals: a transaction
// guarded on it never commits.
func EncodeProducerView(view uint64) []byte {
	if view > MaxProducerView {
		return nil
	}
	b, err := batchlog.EncodeProducerView(int64(view))
	if err != nil {
		return nil
	}
	return b
}

// DecodeProducerView accepts what upstream's TryParseProducerView accepts:
// the canonical decimal of a view in 1..MaxProducerView.
func DecodeProducerView(data []byte) (uint64, error) {
	v, err := batchlog.DecodeProducerView(data)
	if err != nil {
		return 0, codecErr(err)
	}
	return uint64(v), nil
}
