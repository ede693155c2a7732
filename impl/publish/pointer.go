package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// PointerSchemaVersion is the pointer record schema.
const PointerSchemaVersion = 1

// Pointer is the value of /snapshot/latest or /snapshot/fallback.
type Pointer struct {
	PointerSchemaVersion int               `json:"pointer_schema_version"`
	SnapshotID           string            `json:"snapshot_id"`
	LastIncludedSeq      uint64            `json:"last_included_seq"`
	LastIncludedBatchID  uint64            `json:"last_included_batch_id"`
	ProducerViewVersion  uint64            `json:"producer_view_version"`
	PayloadSize          uint64            `json:"payload_size"`
	PayloadChecksum      snapshot.Checksum `json:"payload_checksum"`
	CreatedAtMS          int64             `json:"created_at_ms"`
	ObjectPrefix         string            `json:"object_prefix"` // where the descriptor is: exact GETs, never a listing
}

// ErrMalformedPointer: a pointer value that does not decode or validate.
var ErrMalformedPointer = errors.New("malformed snapshot pointer")

// Cursor is the pointer's batch cursor.
func (p Pointer) Cursor() state.Cursor {
	return state.Cursor{BatchID: p.LastIncludedBatchID, Seq: p.LastIncludedSeq}
}

// FromDescriptor builds the pointer that names a written snapshot.
func FromDescriptor(d snapshot.Descriptor) Pointer {
	return Pointer{PointerSchemaVersion: PointerSchemaVersion, SnapshotID: d.SnapshotID, LastIncludedSeq: d.LastIncludedSeq,
		LastIncludedBatchID: d.LastIncludedBatchID, ProducerViewVersion: d.ProducerViewVersion, PayloadSize: d.PayloadSize,
		PayloadChecksum: d.PayloadChecksum, CreatedAtMS: d.CreatedAtMS, ObjectPrefix: d.ObjectPrefix}
}

// Validate checks a pointer on its own.
func (p Pointer) Validate() error {
	if p.PointerSchemaVersion != PointerSchemaVersion {
		return fmt.Errorf("%w: schema %d", ErrMalformedPointer, p.PointerSchemaVersion)
	}
	id, err := snapshot.ParseID(p.SnapshotID)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedPointer, err)
	}
	if id.BatchID != p.LastIncludedBatchID {
		return fmt.Errorf("%w: id %s names batch %d, pointer %d", ErrMalformedPointer, p.SnapshotID, id.BatchID, p.LastIncludedBatchID)
	}
	if (p.LastIncludedSeq == 0) != (p.LastIncludedBatchID == 0) || p.LastIncludedSeq < p.LastIncludedBatchID {
		return fmt.Errorf("%w: cursor batch %d seq %d", ErrMalformedPointer, p.LastIncludedBatchID, p.LastIncludedSeq)
	}
	if _, _, err := snapshot.ParseChecksum(p.PayloadChecksum); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedPointer, err)
	}
	if p.PayloadSize == 0 || p.ObjectPrefix == "" || p.CreatedAtMS <= 0 {
		return fmt.Errorf("%w: size %d, prefix %q, created %d", ErrMalformedPointer, p.PayloadSize, p.ObjectPrefix, p.CreatedAtMS)
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

// DecodePointer decodes a pointer strictly (no unknown fields, canonical).
func DecodePointer(data []byte) (Pointer, error) {
	var p Pointer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Pointer{}, fmt.Errorf("%w: %v", ErrMalformedPointer, err)
	}
	if err := p.Validate(); err != nil {
		return Pointer{}, err
	}
	if canon, _ := p.Encode(); !bytes.Equal(canon, data) {
		return Pointer{}, fmt.Errorf("%w: not canonical", ErrMalformedPointer)
	}
	return p, nil
}

// Agree checks that a pointer and the descriptor it names say the same.
func Agree(p Pointer, d snapshot.Descriptor) error {
	if FromDescriptor(d) != p {
		return fmt.Errorf("%w: pointer %+v, descriptor %+v", snapshot.ErrIdentity, p, FromDescriptor(d))
	}
	return nil
}
