package oplog

import (
	"bytes"
	"fmt"
	"strconv"
)

// FloorSchemaVersion is the compaction floor record's schema version.
const FloorSchemaVersion = 1

// Floor is the compaction floor: the highest batch id readers must assume may
// have been deleted. It never decreases.
type Floor struct {
	BatchID uint64
}

// Encode returns {"schema_version":1,"batch_id":N}.
func (f Floor) Encode() []byte {
	out := []byte(`{"schema_version":1,"batch_id":`)
	out = strconv.AppendUint(out, f.BatchID, 10)
	return append(out, '}')
}

// DecodeFloor decodes a canonical compaction floor record.
func DecodeFloor(data []byte) (Floor, error) {
	fields, err := decodeObject(data, "schema_version", "batch_id")
	if err != nil {
		return Floor{}, err
	}
	if fields[0] != FloorSchemaVersion {
		return Floor{}, fmt.Errorf("%w: floor schema %d", ErrVersion, fields[0])
	}
	f := Floor{BatchID: fields[1]}
	if !bytes.Equal(f.Encode(), data) {
		return Floor{}, ErrNonCanonical
	}
	return f, nil
}
