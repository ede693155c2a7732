package batchsnap

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/oplogha/oplogha/impl/contract"

	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// FloorSchemaVersion is the compaction floor record's schema_version.
const FloorSchemaVersion = 1

// Floor is the value of /oplog/<cluster>/snapshot/compaction_floor: the
// highest batch id readers must assume may have been deleted (RFC
// "Definitions" and "Retention"). It never decreases.
//
// The record is the RFC's, not upstream's (upstream names the key but its
// batch-OpLog snapshot code does not define the value):
//
//	{"schema_version":1,"batch_id":N}
//
// exactly, with N a decimal without sign or leading zero. The decoder
// accepts only that form: the floor is compared by value in guarded
// transactions, so one floor has one encoding.
type Floor struct {
	BatchID uint64
}

// Encode returns the floor record.
func (f Floor) Encode() []byte {
	out := make([]byte, 0, 56)
	out = append(out, `{"schema_version":`...)
	out = strconv.AppendUint(out, FloorSchemaVersion, 10)
	out = append(out, `,"batch_id":`...)
	out = strconv.AppendUint(out, f.BatchID, 10)
	return append(out, '}')
}

// DecodeFloor decodes a compaction floor record. The value must be a JSON
// object with exactly the members schema_version (a uint32, contract.ErrVersion
// unless 1) and batch_id (a uint64), written exactly as Encode writes them
// (contract.ErrMalformed otherwise, with the reason).
func DecodeFloor(data []byte) (Floor, error) {
	root, doc, perr := jsoncpp.Parse(data)
	if perr != nil {
		return Floor{}, contract.NewError(contract.ErrMalformed, perr.Reason(doc))
	}
	if root.Kind != jsoncpp.Object {
		return Floor{}, contract.NewError(contract.ErrMalformed, "compaction floor must be a JSON object")
	}
	v, ok := root.Get("schema_version")
	switch {
	case !ok:
		return Floor{}, contract.NewError(contract.ErrMalformed, "missing field: schema_version")
	case !v.IsUInt():
		return Floor{}, contract.NewError(contract.ErrMalformed, "field must be uint32: schema_version")
	case v.AsUInt64() != FloorSchemaVersion:
		return Floor{}, contract.NewError(contract.ErrVersion, fmt.Sprintf("unsupported compaction floor schema_version %d", v.AsUInt64()))
	}
	v, ok = root.Get("batch_id")
	switch {
	case !ok:
		return Floor{}, contract.NewError(contract.ErrMalformed, "missing field: batch_id")
	case !v.IsUInt64():
		return Floor{}, contract.NewError(contract.ErrMalformed, "field must be uint64: batch_id")
	}
	f := Floor{BatchID: v.AsUInt64()}
	if !bytes.Equal(f.Encode(), data) {
		return Floor{}, contract.NewError(contract.ErrMalformed, fmt.Sprintf("compaction floor is not in its canonical form %s", f.Encode()))
	}
	return f, nil
}
