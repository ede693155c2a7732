package oplog

import (
	"fmt"
	"strconv"
)

// EncodeProducerView is the canonical decimal of view (> 0).
func EncodeProducerView(view uint64) []byte { return strconv.AppendUint(nil, view, 10) }

// DecodeProducerView accepts only a canonical decimal greater than zero.
func DecodeProducerView(data []byte) (uint64, error) {
	v, err := parseUintField("producer view", data)
	if err != nil {
		return 0, err
	}
	if v == 0 {
		return 0, fmt.Errorf("producer view: %w: 0 is not a view", ErrMalformed)
	}
	return v, nil
}
