package batchlog

import (
	"fmt"
	"strconv"

	"github.com/oplogha/oplogha/impl/contract"
)

// The producer view (/oplog/<cluster>/producer_view) is the fencing token a
// primary claims before it writes batches. Upstream stores it as
// std::to_string of its ViewVersionId, an int64 that must be positive, and
// reads it back with std::from_chars, refusing anything that is not exactly
// what std::to_string would write (so no sign, no leading zero, no space).

// EncodeProducerView returns the value upstream writes for view, which must
// be positive.
func EncodeProducerView(view int64) ([]byte, error) {
	if view <= 0 {
		return nil, contract.NewError(contract.ErrMalformed, fmt.Sprintf("producer view %d is not positive", view))
	}
	return strconv.AppendInt(nil, view, 10), nil
}

// DecodeProducerView decodes a producer view value as upstream's
// TryParseProducerView does: a canonical decimal int64 above zero.
func DecodeProducerView(data []byte) (int64, error) {
	v, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil || v <= 0 || strconv.FormatInt(v, 10) != string(data) {
		return 0, contract.NewError(contract.ErrMalformed, fmt.Sprintf("invalid producer view value %.40q", data))
	}
	return v, nil
}
