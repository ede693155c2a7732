package contract

import (
	"errors"
	"math"
	"testing"
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
		``:                                      ErrMalformed,
		`x`:                                     ErrMalformed,
		`[1,12]`:                                ErrMalformed,
		`12`:                                    ErrMalformed,
		`{"schema_version":1,"batch_id":12`:     ErrMalformed,
		`{"schema_version":1}`:                  ErrMalformed,
		`{"batch_id":12}`:                       ErrMalformed,
		`{"schema_version":2,"batch_id":12}`:    ErrVersion,
		`{"schema_version":0,"batch_id":12}`:    ErrVersion,
		`{"schema_version":"1","batch_id":12}`:  ErrMalformed,
		`{"schema_version":-1,"batch_id":12}`:   ErrMalformed,
		`{"schema_version":1,"batch_id":"12"}`:  ErrMalformed,
		`{"schema_version":1,"batch_id":-12}`:   ErrMalformed,
		`{"schema_version":1,"batch_id":1.5}`:   ErrMalformed,
		`{"schema_version":1,"batch_id":012}`:   ErrMalformed,
		`{"schema_version":1,"batch_id":12.0}`:  ErrMalformed,
		`{"schema_version":1,"batch_id":1.2e1}`: ErrMalformed,
		`{"schema_version":1,"batch_id":18446744073709551616}`: ErrMalformed,
		`{"batch_id":12,"schema_version":1}`:                   ErrMalformed,
		`{"schema_version":1, "batch_id":12}`:                  ErrMalformed,
		`{"schema_version":1,"batch_id":12} `:                  ErrMalformed,
		`{"schema_version":1,"batch_id":12,"x":1}`:             ErrMalformed,
		`{"schema_version":1,"batch_id":11,"batch_id":12}`:     ErrMalformed,
		"\xef\xbb\xbf" + `{"schema_version":1,"batch_id":12}`:  ErrMalformed,
	} {
		_, err := DecodeFloor([]byte(raw))
		if !errors.Is(err, want) {
			t.Errorf("DecodeFloor(%q) = %v, want %v", raw, err, want)
		}
		var de *Error
		if err != nil && (!errors.As(err, &de) || de.Reason == "") {
			t.Errorf("DecodeFloor(%q): %v carries no reason", raw, err)
		}
	}
}
