package batchsnap

import (
	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// SchemaVersion and Format are the only schema_version and snapshot_format
// upstream writes and reads (metadata.h kBatchOpLogSnapshotSchemaVersion,
// kBatchOpLogSnapshotFormat).
const (
	SchemaVersion = 1
	Format        = "standby-oplog-materialized/v1"
)

// Identity is what the descriptor and the manifest both carry, and a reader
// holds equal between them: the format, the snapshot id and the batch
// cursor and producer view the snapshot was captured at.
type Identity struct {
	SchemaVersion       uint32
	SnapshotFormat      string
	SnapshotID          string
	LastIncludedSeq     uint64
	LastIncludedBatchID uint64
	ProducerViewVersion int64 // upstream's ViewVersionId; 0 when the view key was absent at capture
}

// NewIdentity is the identity of a snapshot with id at cursor c under view.
func NewIdentity(id ID, c contract.Cursor, view int64) Identity {
	return Identity{SchemaVersion: SchemaVersion, SnapshotFormat: Format, SnapshotID: id.String(),
		LastIncludedSeq: c.Seq, LastIncludedBatchID: c.BatchID, ProducerViewVersion: view}
}

// Cursor is the captured batch cursor.
func (m Identity) Cursor() contract.Cursor {
	return contract.Cursor{BatchID: m.LastIncludedBatchID, Seq: m.LastIncludedSeq}
}

// ID is the parsed snapshot id (valid once the identity validated).
func (m Identity) ID() ID {
	id, _ := ParseID(m.SnapshotID)
	return id
}

// validate is metadata.cpp ValidateIdentity, in upstream's order and words.
func (m Identity) validate() error {
	switch {
	case m.SchemaVersion != SchemaVersion:
		return fail(ErrVersion, "unsupported snapshot schema_version")
	case m.SnapshotFormat != Format:
		return fail(ErrVersion, "unsupported snapshot_format")
	}
	if id, err := ParseID(m.SnapshotID); err != nil || id.BatchID != m.LastIncludedBatchID {
		return fail(ErrMalformed, "snapshot_id does not match the batch cursor")
	}
	if (m.LastIncludedSeq == 0) != (m.LastIncludedBatchID == 0) {
		return fail(ErrMalformed, "sequence and batch cursors must both be zero or non-zero")
	}
	if m.ProducerViewVersion < 0 {
		return fail(ErrMalformed, "producer_view_version must be non-negative")
	}
	return nil
}

// encode sets the identity members (metadata.cpp EncodeIdentity).
func (m Identity) encode(root *jsoncpp.Value) {
	root.Set("schema_version", u64(uint64(m.SchemaVersion)))
	root.Set("snapshot_format", str(m.SnapshotFormat))
	root.Set("snapshot_id", str(m.SnapshotID))
	root.Set("last_included_seq", u64(m.LastIncludedSeq))
	root.Set("last_included_batch_id", u64(m.LastIncludedBatchID))
	root.Set("producer_view_version", i64(m.ProducerViewVersion))
}

// decodeIdentity is metadata.cpp DecodeIdentity: the members in upstream's
// order, then validate.
func decodeIdentity(f *fields) (Identity, error) {
	m := Identity{
		SchemaVersion:       f.u32("schema_version"),
		SnapshotFormat:      f.str("snapshot_format"),
		SnapshotID:          f.str("snapshot_id"),
		LastIncludedSeq:     f.u64("last_included_seq"),
		LastIncludedBatchID: f.u64("last_included_batch_id"),
		ProducerViewVersion: f.i64("producer_view_version"),
	}
	if f.reason != "" {
		return Identity{}, fail(ErrMalformed, f.reason)
	}
	return m, m.validate()
}
