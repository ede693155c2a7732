package batchsnap

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
)

// PointerSchemaVersion is the pointer record's pointer_schema_version.
// Version 1 was the project's own snapshot layout (payload checksum and
// object prefix), which nothing writes or reads any more; a version-1
// pointer is refused as ErrVersion.
const PointerSchemaVersion = 2

// Pointer is the value of the latest and fallback keys: the snapshot a
// recovery starts from. Upstream names the keys but defines no value at
// 3b5a594, so the record is the project's (impl/contract/CONTRACT.md): the
// RFC's fields ("Etcd Keyspace") with the snapshot's descriptor named by
// exact key, size and CRC32C, so a reader GETs it and checks it before it
// trusts anything it says, and never lists the store (RFC "Scan the Catalog
// or Bucket During Recovery"). Canonical JSON, one line, the members in
// this order, as Encode writes it:
//
//	{"pointer_schema_version":2,"snapshot_id":"42-7","last_included_seq":1000,"last_included_batch_id":42,
//	 "producer_view_version":3,"descriptor_key":"snapshots/c1/batch-oplog/42-7/descriptor.json",
//	 "descriptor_size":306,"descriptor_crc32c":3022498787,"created_at_ms":1767225600000}
//
// Publication compares the raw value in its transaction (RFC "Pointer
// Publication"), so one pointer has one encoding: DecodePointer takes only
// that form.
type Pointer struct {
	PointerSchemaVersion int    `json:"pointer_schema_version"`
	SnapshotID           string `json:"snapshot_id"`
	LastIncludedSeq      uint64 `json:"last_included_seq"`
	LastIncludedBatchID  uint64 `json:"last_included_batch_id"`
	ProducerViewVersion  int64  `json:"producer_view_version"`
	DescriptorKey        string `json:"descriptor_key"`
	DescriptorSize       uint64 `json:"descriptor_size"`
	DescriptorCRC32C     uint32 `json:"descriptor_crc32c"`
	CreatedAtMS          int64  `json:"created_at_ms"`
}

// PointerTo is the pointer to a written snapshot: its descriptor, stored
// at key as the bytes raw.
func PointerTo(d Descriptor, key string, raw []byte) Pointer {
	return Pointer{PointerSchemaVersion: PointerSchemaVersion, SnapshotID: d.SnapshotID, LastIncludedSeq: d.LastIncludedSeq,
		LastIncludedBatchID: d.LastIncludedBatchID, ProducerViewVersion: d.ProducerViewVersion, DescriptorKey: key,
		DescriptorSize: uint64(len(raw)), DescriptorCRC32C: CRC32C(raw), CreatedAtMS: d.CreatedAtMS}
}

// Cursor is the pointer's batch cursor.
func (p Pointer) Cursor() contract.Cursor {
	return contract.Cursor{BatchID: p.LastIncludedBatchID, Seq: p.LastIncludedSeq}
}

// ID is the pointer's snapshot id (valid once the pointer validated).
func (p Pointer) ID() ID {
	id, _ := ParseID(p.SnapshotID)
	return id
}

// Root is the snapshot root the descriptor key lies under (valid once the
// pointer validated).
func (p Pointer) Root() string {
	root, _, _ := ParseDescriptorKey(p.DescriptorKey)
	return root
}

// Descriptor is the descriptor as the pointer names it.
func (p Pointer) Descriptor() ObjectRef {
	return ObjectRef{Key: p.DescriptorKey, StoredSize: p.DescriptorSize, CRC32C: p.DescriptorCRC32C}
}

// Validate checks a pointer on its own: the schema; a snapshot id naming
// the pointer's batch; a consistent cursor (both zero or neither, the
// sequence at least the batch id, as a batch holds at least one entry); a
// view of zero or more; a descriptor key that is the layout's key for the
// pointer's id; a descriptor size; a creation time. Failures are
// ErrMalformedPointer, a schema other than 2 ErrVersion too.
func (p Pointer) Validate() error {
	if p.PointerSchemaVersion != PointerSchemaVersion {
		return &pointerVersion{contract.NewError(ErrMalformedPointer, fmt.Sprintf("pointer_schema_version %d (this reader knows %d)",
			p.PointerSchemaVersion, PointerSchemaVersion))}
	}
	id, err := ParseID(p.SnapshotID)
	if err != nil {
		return fail(ErrMalformedPointer, err.Error())
	}
	if id.BatchID != p.LastIncludedBatchID {
		return failf(ErrMalformedPointer, "id %s names batch %d, pointer %d", p.SnapshotID, id.BatchID, p.LastIncludedBatchID)
	}
	if (p.LastIncludedSeq == 0) != (p.LastIncludedBatchID == 0) || p.LastIncludedSeq < p.LastIncludedBatchID {
		return failf(ErrMalformedPointer, "cursor batch %d seq %d", p.LastIncludedBatchID, p.LastIncludedSeq)
	}
	if p.ProducerViewVersion < 0 {
		return failf(ErrMalformedPointer, "producer view %d", p.ProducerViewVersion)
	}
	if _, kid, ok := ParseDescriptorKey(p.DescriptorKey); !ok || kid != id {
		return failf(ErrMalformedPointer, "descriptor key %q is not snapshot %s's", p.DescriptorKey, p.SnapshotID)
	}
	if p.DescriptorSize == 0 || p.CreatedAtMS <= 0 {
		return failf(ErrMalformedPointer, "descriptor size %d, created %d", p.DescriptorSize, p.CreatedAtMS)
	}
	return nil
}

// pointerVersion is a pointer of another schema: ErrMalformedPointer and
// contract.ErrVersion.
type pointerVersion struct{ err error }

func (e *pointerVersion) Error() string   { return e.err.Error() }
func (e *pointerVersion) Unwrap() []error { return []error{e.err, contract.ErrVersion} }

// Encode renders the canonical JSON of a valid pointer.
func (p Pointer) Encode() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// DecodePointer decodes a pointer strictly: no unknown member, a valid
// pointer, and exactly the bytes Encode writes for it. Failures are
// ErrMalformedPointer.
func DecodePointer(data []byte) (Pointer, error) {
	var p Pointer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		if len(data) == 0 {
			return Pointer{}, fail(ErrMalformedPointer, "empty value")
		}
		return Pointer{}, fail(ErrMalformedPointer, err.Error())
	}
	if err := p.Validate(); err != nil {
		return Pointer{}, err
	}
	if canon, _ := p.Encode(); !bytes.Equal(canon, data) {
		return Pointer{}, fail(ErrMalformedPointer, "not canonical")
	}
	return p, nil
}
