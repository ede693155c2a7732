package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// PointerSchemaVersion is the pointer record's pointer_schema_version.
const PointerSchemaVersion = 1

// Pointer is the value of /oplog/<c>/snapshot/latest or
// /oplog/<c>/snapshot/fallback: the snapshot a recovery starts from. The
// RFC ("Etcd Keyspace") names its fields; object_prefix, where the
// snapshot's descriptor is, is the project's addition, so a reader GETs
// exact keys and never lists the store (RFC "Scan the Catalog or Bucket
// During Recovery"). It is canonical JSON, the fields in this order, as
// Encode writes it:
//
//	{"pointer_schema_version":1,"snapshot_id":"…","last_included_seq":S,"last_included_batch_id":B,
//	 "producer_view_version":V,"payload_size":N,"payload_checksum":"crc64nvme:…","created_at_ms":T,"object_prefix":"…"}
//
// (one line). Publication compares the raw value in its transaction (RFC
// "Pointer Publication"), so one pointer has one encoding: DecodePointer
// takes only that form.
type Pointer struct {
	PointerSchemaVersion int      `json:"pointer_schema_version"`
	SnapshotID           string   `json:"snapshot_id"`
	LastIncludedSeq      uint64   `json:"last_included_seq"`
	LastIncludedBatchID  uint64   `json:"last_included_batch_id"`
	ProducerViewVersion  uint64   `json:"producer_view_version"`
	PayloadSize          uint64   `json:"payload_size"`
	PayloadChecksum      Checksum `json:"payload_checksum"`
	CreatedAtMS          int64    `json:"created_at_ms"`
	ObjectPrefix         string   `json:"object_prefix"` // where the descriptor is: exact GETs, never a listing
}

// Cursor is the pointer's batch cursor.
func (p Pointer) Cursor() Cursor {
	return Cursor{BatchID: p.LastIncludedBatchID, Seq: p.LastIncludedSeq}
}

// Validate checks a pointer on its own: the schema, a snapshot id naming
// the pointer's batch, a consistent cursor (both zero or neither, the
// sequence at least the batch id), a tagged checksum, a payload size, an
// object prefix and a creation time. Failures are ErrMalformedPointer.
func (p Pointer) Validate() error {
	if p.PointerSchemaVersion != PointerSchemaVersion {
		return newError(ErrMalformedPointer, fmt.Sprintf("schema %d", p.PointerSchemaVersion))
	}
	id, err := ParseSnapshotID(p.SnapshotID)
	if err != nil {
		return newError(ErrMalformedPointer, err.Error())
	}
	if id.BatchID != p.LastIncludedBatchID {
		return newError(ErrMalformedPointer, fmt.Sprintf("id %s names batch %d, pointer %d", p.SnapshotID, id.BatchID, p.LastIncludedBatchID))
	}
	if (p.LastIncludedSeq == 0) != (p.LastIncludedBatchID == 0) || p.LastIncludedSeq < p.LastIncludedBatchID {
		return newError(ErrMalformedPointer, fmt.Sprintf("cursor batch %d seq %d", p.LastIncludedBatchID, p.LastIncludedSeq))
	}
	if _, _, err := ParseChecksum(p.PayloadChecksum); err != nil {
		return newError(ErrMalformedPointer, err.Error())
	}
	if p.PayloadSize == 0 || p.ObjectPrefix == "" || p.CreatedAtMS <= 0 {
		return newError(ErrMalformedPointer, fmt.Sprintf("size %d, prefix %q, created %d", p.PayloadSize, p.ObjectPrefix, p.CreatedAtMS))
	}
	return nil
}

// Encode renders the canonical JSON of a valid pointer.
func (p Pointer) Encode() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// DecodePointer decodes a pointer strictly: no unknown field, a valid
// pointer, and exactly the bytes Encode writes for it. Failures are
// ErrMalformedPointer.
func DecodePointer(data []byte) (Pointer, error) {
	var p Pointer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Pointer{}, newError(ErrMalformedPointer, err.Error())
	}
	if err := p.Validate(); err != nil {
		return Pointer{}, err
	}
	if canon, _ := p.Encode(); !bytes.Equal(canon, data) {
		return Pointer{}, newError(ErrMalformedPointer, "not canonical")
	}
	return p, nil
}
