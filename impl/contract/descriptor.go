package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// DescriptorSchemaVersion is the schema of the descriptors writers write.
const DescriptorSchemaVersion = 1

// Descriptor is a snapshot's descriptor (RFC "Descriptor"), the object
// DescriptorName under the snapshot's object prefix: the one a pointer's
// object_prefix leads a reader to. Schema 1 is indented JSON, the members
// in this order, as Encode writes it:
//
//	{
//	  "snapshot_id": "…",
//	  "schema_version": 1,
//	  …
//	  "created_at_ms": T
//	}
//
// A descriptor in upstream's legacy three-field text form
// (`<last_included_seq>|<producer_view_version>|<created_at_ms>`) decodes
// with SchemaVersion 0 and zero values in every other field; readers keep
// accepting it (RFC "Payload Envelope": legacy support is retained), writers
// never emit it.
type Descriptor struct {
	SnapshotID          string   `json:"snapshot_id"`
	SchemaVersion       int      `json:"schema_version"`
	LastIncludedSeq     uint64   `json:"last_included_seq"`
	LastIncludedBatchID uint64   `json:"last_included_batch_id"`
	ProducerViewVersion uint64   `json:"producer_view_version"`
	PayloadChecksum     Checksum `json:"payload_checksum"`
	PayloadSize         uint64   `json:"payload_size"`
	ManifestKey         string   `json:"manifest_key"`
	ObjectPrefix        string   `json:"object_prefix"`
	PreviousSnapshotID  string   `json:"previous_snapshot_id"`
	CreatedAtMS         int64    `json:"created_at_ms"`
}

// Pointer is the pointer that names the snapshot d describes: the identity
// fields a pointer duplicates, copied.
func (d Descriptor) Pointer() Pointer {
	return Pointer{PointerSchemaVersion: PointerSchemaVersion, SnapshotID: d.SnapshotID, LastIncludedSeq: d.LastIncludedSeq,
		LastIncludedBatchID: d.LastIncludedBatchID, ProducerViewVersion: d.ProducerViewVersion, PayloadSize: d.PayloadSize,
		PayloadChecksum: d.PayloadChecksum, CreatedAtMS: d.CreatedAtMS, ObjectPrefix: d.ObjectPrefix}
}

// Agree checks that pointer p and the descriptor it names say the same (RFC
// "Payload Envelope": descriptor, manifest, pointer and envelope must
// agree); a mismatch is ErrSnapshotIdentity.
func (d Descriptor) Agree(p Pointer) error {
	if d.Pointer() != p {
		return snapshotError(ErrSnapshotIdentity, "pointer %+v, descriptor %+v", p, d.Pointer())
	}
	return nil
}

// Legacy reports a descriptor decoded from the three-field legacy form.
func (d Descriptor) Legacy() bool { return d.SchemaVersion == 0 }

// Encode renders a valid schema-v1 descriptor.
func (d Descriptor) Encode() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return json.MarshalIndent(d, "", "  ")
}

// Validate checks a schema-v1 descriptor on its own: the schema, a
// consistent cursor, a snapshot id naming its batch, a tagged checksum, a
// manifest key under the object prefix, a producer view for a non-empty
// cursor and a creation time.
func (d Descriptor) Validate() error {
	if d.SchemaVersion != DescriptorSchemaVersion {
		return snapshotError(ErrSnapshotVersion, "descriptor schema %d", d.SchemaVersion)
	}
	if (d.LastIncludedSeq == 0) != (d.LastIncludedBatchID == 0) {
		return snapshotError(ErrSnapshotCursor, "seq %d with batch %d", d.LastIncludedSeq, d.LastIncludedBatchID)
	}
	if d.LastIncludedSeq < d.LastIncludedBatchID {
		return snapshotError(ErrSnapshotCursor, "seq %d below batch %d", d.LastIncludedSeq, d.LastIncludedBatchID)
	}
	id, err := snapshotIDOf(d.SnapshotID)
	if err != nil {
		return err
	}
	if id.BatchID != d.LastIncludedBatchID {
		return snapshotError(ErrSnapshotIdentity, "id %s names batch %d, descriptor %d", d.SnapshotID, id.BatchID, d.LastIncludedBatchID)
	}
	if _, err := checksumOf(d.PayloadChecksum); err != nil {
		return err
	}
	if d.ManifestKey == "" || d.ObjectPrefix == "" || !strings.HasPrefix(d.ManifestKey, d.ObjectPrefix) {
		return snapshotError(ErrSnapshotMalformed, "manifest key %q outside object prefix %q", d.ManifestKey, d.ObjectPrefix)
	}
	if d.ProducerViewVersion == 0 && d.LastIncludedBatchID != 0 {
		return snapshotError(ErrSnapshotMalformed, "producer view 0 with a non-empty cursor")
	}
	if d.CreatedAtMS <= 0 {
		return snapshotError(ErrSnapshotMalformed, "created_at_ms %d", d.CreatedAtMS)
	}
	return nil
}

// DecodeDescriptor decodes a schema-v1 JSON descriptor (strict: no unknown
// member, nothing after it, valid) or a legacy
// `<last_included_seq>|<producer_view_version>|<created_at_ms>` (decimal
// fields without leading zeros, the time at most 2^62).
func DecodeDescriptor(data []byte) (Descriptor, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] != '{' {
		return decodeLegacyDescriptor(trimmed)
	}
	var d Descriptor
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Descriptor{}, snapshotError(ErrSnapshotMalformed, "descriptor: %v", err)
	}
	if dec.More() {
		return Descriptor{}, snapshotError(ErrSnapshotTrailing, "after the descriptor")
	}
	if err := d.Validate(); err != nil {
		return Descriptor{}, err
	}
	return d, nil
}

func decodeLegacyDescriptor(data []byte) (Descriptor, error) {
	parts := strings.Split(string(data), "|")
	if len(parts) != 3 {
		return Descriptor{}, snapshotError(ErrSnapshotMalformed, "legacy descriptor: %d fields, want 3", len(parts))
	}
	var nums [3]uint64
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') {
			return Descriptor{}, snapshotError(ErrSnapshotMalformed, "legacy descriptor field %d %q", i, p)
		}
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return Descriptor{}, snapshotError(ErrSnapshotOverflow, "legacy descriptor field %d %q", i, p)
		}
		nums[i] = v
	}
	if nums[2] > 1<<62 {
		return Descriptor{}, snapshotError(ErrSnapshotOverflow, "created_at_ms %d", nums[2])
	}
	return Descriptor{LastIncludedSeq: nums[0], ProducerViewVersion: nums[1], CreatedAtMS: int64(nums[2])}, nil
}

// EncodeLegacyDescriptor renders the legacy three-field form (fixtures and
// tests only: writers never emit it).
func EncodeLegacyDescriptor(seq, view uint64, createdAtMS int64) []byte {
	return []byte(fmt.Sprintf("%d|%d|%d", seq, view, createdAtMS))
}
