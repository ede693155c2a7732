package batchlog

import (
	"strconv"

	"github.com/oplogha/oplogha/impl/contract"

	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// PrefixSchemaVersion is the durable prefix record's schema_version
// (upstream kDurablePrefixSchemaVersion).
const PrefixSchemaVersion = 1

// DurablePrefix is the value of /oplog/<cluster>/durable_prefix: the highest
// batch acknowledged as durable and its last sequence id.
//
// The codec checks what upstream's DecodeDurablePrefix checks and nothing
// more: it does not require (BatchID == 0) == (LastSeq == 0) or LastSeq >=
// BatchID. Such invariants of the OpLog belong to its reader.
type DurablePrefix struct {
	BatchID uint64
	LastSeq uint64
}

// EncodeDurablePrefix returns what upstream's EncodeDurablePrefix writes:
//
//	{"batch_id":N,"last_seq":M,"schema_version":1}
//
// (jsoncpp writes object members sorted by name).
func EncodeDurablePrefix(p DurablePrefix) []byte {
	out := make([]byte, 0, 80)
	out = append(out, `{"batch_id":`...)
	out = strconv.AppendUint(out, p.BatchID, 10)
	out = append(out, `,"last_seq":`...)
	out = strconv.AppendUint(out, p.LastSeq, 10)
	return append(out, `,"schema_version":1}`...)
}

// DecodeDurablePrefix decodes a durable prefix value as upstream does: any
// JSON object (members in any order, extra members ignored, a repeated name's
// last value winning, numbers such as 3.0 or 9e0 that are exact integers
// accepted) with schema_version a uint32 equal to 1 and batch_id and last_seq
// uint64s, checked in that order. Errors carry upstream's reason
// ("missing field: batch_id", "field must be uint64: last_seq", ...).
func DecodeDurablePrefix(data []byte) (DurablePrefix, error) {
	root, doc, perr := jsoncpp.Parse(data)
	if perr != nil {
		return DurablePrefix{}, contract.NewError(contract.ErrMalformed, perr.Reason(doc))
	}
	if root.Kind != jsoncpp.Object {
		return DurablePrefix{}, contract.NewError(contract.ErrMalformed, "durable prefix must be a JSON object")
	}
	v, ok := root.Get("schema_version")
	switch {
	case !ok:
		return DurablePrefix{}, contract.NewError(contract.ErrMalformed, "missing field: schema_version")
	case !v.IsUInt():
		return DurablePrefix{}, contract.NewError(contract.ErrMalformed, "field must be uint32: schema_version")
	case v.AsUInt64() != PrefixSchemaVersion:
		return DurablePrefix{}, contract.NewError(contract.ErrVersion, "unsupported durable prefix schema_version")
	}
	var p DurablePrefix
	for _, f := range []struct {
		name string
		dst  *uint64
	}{{"batch_id", &p.BatchID}, {"last_seq", &p.LastSeq}} {
		v, ok := root.Get(f.name)
		if !ok {
			return DurablePrefix{}, contract.NewError(contract.ErrMalformed, "missing field: "+f.name)
		}
		if !v.IsUInt64() {
			return DurablePrefix{}, contract.NewError(contract.ErrMalformed, "field must be uint64: "+f.name)
		}
		*f.dst = v.AsUInt64()
	}
	return p, nil
}
