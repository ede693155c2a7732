package batchlog

import (
	"errors"
	"math"
	"testing"

	"github.com/oplogha/oplogha/impl/contract"
)

func TestProducerView(t *testing.T) {
	for _, v := range []int64{1, 7, 1000, math.MaxInt64} {
		enc, err := EncodeProducerView(v)
		if err != nil {
			t.Fatalf("EncodeProducerView(%d): %v", v, err)
		}
		got, err := DecodeProducerView(enc)
		if err != nil || got != v {
			t.Fatalf("DecodeProducerView(%s) = %d, %v", enc, got, err)
		}
	}
	for _, v := range []int64{0, -1} {
		if _, err := EncodeProducerView(v); !errors.Is(err, contract.ErrMalformed) {
			t.Errorf("EncodeProducerView(%d) = %v", v, err)
		}
	}
	// What std::from_chars + the std::to_string comparison refuse.
	for _, s := range []string{"", "0", "-1", "+1", "01", " 1", "1 ", "1.0", "9223372036854775808", "x"} {
		if _, err := DecodeProducerView([]byte(s)); !errors.Is(err, contract.ErrMalformed) {
			t.Errorf("DecodeProducerView(%q) = %v", s, err)
		}
	}
}
