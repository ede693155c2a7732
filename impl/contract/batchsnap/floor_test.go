package batchsnap

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/oplogha/oplogha/impl/contract"
)

func TestFloorRoundTrip(t *testing.T) {
	for _, id := range []uint64{0, 1, 12, math.MaxUint64} {
		enc := Floor{BatchID: id}.Encode()
		got, err := DecodeFloor(enc)
		if err != nil || got.BatchID != id {
			t.Fatalf("DecodeFloor(%s) = %+v, %v", enc, got, err)
		}
	}
	if got := string(Floor{BatchID: 12}.Encode()); got != `{"schema_version":1,"batch_id":12}` {
		t.Fatalf("Encode = %s", got)
	}
}

// TestFloorRefuses: anything but the exact record is refused, with the kind
// a caller branches on.
func TestFloorRefuses(t *testing.T) {
	for raw, want := range map[string]error{
		``:                                      contract.ErrMalformed,
		`x`:                                     contract.ErrMalformed,
		`[1,12]`:                                contract.ErrMalformed,
		`12`:                                    contract.ErrMalformed,
		`{"schema_version":1,"batch_id":12`:     contract.ErrMalformed,
		`{"schema_version":1}`:                  contract.ErrMalformed,
		`{"batch_id":12}`:                       contract.ErrMalformed,
		`{"schema_version":2,"batch_id":12}`:    contract.ErrVersion,
		`{"schema_version":0,"batch_id":12}`:    contract.ErrVersion,
		`{"schema_version":"1","batch_id":12}`:  contract.ErrMalformed,
		`{"schema_version":-1,"batch_id":12}`:   contract.ErrMalformed,
		`{"schema_version":1,"batch_id":"12"}`:  contract.ErrMalformed,
		`{"schema_version":1,"batch_id":-12}`:   contract.ErrMalformed,
		`{"schema_version":1,"batch_id":1.5}`:   contract.ErrMalformed,
		`{"schema_version":1,"batch_id":012}`:   contract.ErrMalformed,
		`{"schema_version":1,"batch_id":12.0}`:  contract.ErrMalformed,
		`{"schema_version":1,"batch_id":1.2e1}`: contract.ErrMalformed,
		`{"schema_version":1,"batch_id":18446744073709551616}`: contract.ErrMalformed,
		`{"batch_id":12,"schema_version":1}`:                   contract.ErrMalformed,
		`{"schema_version":1, "batch_id":12}`:                  contract.ErrMalformed,
		`{"schema_version":1,"batch_id":12} `:                  contract.ErrMalformed,
		`{"schema_version":1,"batch_id":12,"x":1}`:             contract.ErrMalformed,
		`{"schema_version":1,"batch_id":11,"batch_id":12}`:     contract.ErrMalformed,
		"\xef\xbb\xbf" + `{"schema_version":1,"batch_id":12}`:  contract.ErrMalformed,
	} {
		_, err := DecodeFloor([]byte(raw))
		if !errors.Is(err, want) {
			t.Errorf("DecodeFloor(%q) = %v, want %v", raw, err, want)
		}
		var de *contract.Error
		if err != nil && (!errors.As(err, &de) || de.Reason == "") {
			t.Errorf("DecodeFloor(%q): %v carries no reason", raw, err)
		}
	}
}

// encoder writes (the floor has one encoding).
func FuzzDecodeFloor(f *testing.F) {
	f.Add(Floor{BatchID: 12}.Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		fl, err := DecodeFloor(data)
		if err != nil {
			return
		}
		if !bytes.Equal(fl.Encode(), data) {
			t.Fatalf("accepted non-canonical %q", data)
		}
	})
}
