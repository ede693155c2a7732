package oplog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/oplogha/oplogha/impl/state"
)

// PrefixSchemaVersion is the durable prefix record's schema version.
const PrefixSchemaVersion = 1

// DurablePrefix is the highest batch and sequence acknowledged as durable.
// The zero value is the S01 zero state: an initialised cluster with no batch.
type DurablePrefix struct {
	BatchID uint64
	LastSeq uint64
}

// Cursor is the prefix as a state cursor.
func (p DurablePrefix) Cursor() state.Cursor { return state.Cursor{BatchID: p.BatchID, Seq: p.LastSeq} }

// Encode returns {"schema_version":1,"batch_id":N,"last_seq":M}.
func (p DurablePrefix) Encode() []byte {
	out := []byte(`{"schema_version":1,"batch_id":`)
	out = strconv.AppendUint(out, p.BatchID, 10)
	out = append(out, `,"last_seq":`...)
	out = strconv.AppendUint(out, p.LastSeq, 10)
	return append(out, '}')
}

// DecodeDurablePrefix decodes a canonical durable prefix record and checks
// (N==0) == (M==0) and M >= N (each batch holds at least one sequence).
func DecodeDurablePrefix(data []byte) (DurablePrefix, error) {
	fields, err := decodeObject(data, "schema_version", "batch_id", "last_seq")
	if err != nil {
		return DurablePrefix{}, err
	}
	if fields[0] != PrefixSchemaVersion {
		return DurablePrefix{}, fmt.Errorf("%w: durable prefix schema %d", ErrVersion, fields[0])
	}
	p := DurablePrefix{BatchID: fields[1], LastSeq: fields[2]}
	if (p.BatchID == 0) != (p.LastSeq == 0) {
		return DurablePrefix{}, fmt.Errorf("%w: batch_id %d with last_seq %d", ErrMalformed, p.BatchID, p.LastSeq)
	}
	if p.LastSeq < p.BatchID {
		return DurablePrefix{}, fmt.Errorf("%w: last_seq %d below batch_id %d", ErrMalformed, p.LastSeq, p.BatchID)
	}
	if !bytes.Equal(p.Encode(), data) {
		return DurablePrefix{}, ErrNonCanonical
	}
	return p, nil
}

// decodeObject decodes a flat JSON object whose fields are exactly names, each
// a canonical unsigned number, and returns them in names' order.
func decodeObject(data []byte, names ...string) ([]uint64, error) {
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%w: want an object", ErrMalformed)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(m) != len(names) {
		return nil, fmt.Errorf("%w: %d fields, want %v", ErrMalformed, len(m), names)
	}
	out := make([]uint64, len(names))
	for i, n := range names {
		raw, ok := m[n]
		if !ok {
			return nil, fmt.Errorf("%w: missing field %q", ErrMalformed, n)
		}
		v, err := parseUint(raw)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", n, err)
		}
		out[i] = v
	}
	return out, nil
}

// parseUintField is parseUint with the field's name in the error.
func parseUintField(name string, raw []byte) (uint64, error) {
	v, err := parseUint(raw)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}
