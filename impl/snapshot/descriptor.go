package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/oplogha/oplogha/impl/contract"
)

// DescriptorSchemaVersion is the schema of descriptors this package writes.
const DescriptorSchemaVersion = 1

// Descriptor is a snapshot's descriptor (RFC "Descriptor"). A legacy
// descriptor decodes with SchemaVersion 0 and zero values in every new field.
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
func (d Descriptor) Pointer() contract.Pointer {
	return contract.Pointer{PointerSchemaVersion: contract.PointerSchemaVersion, SnapshotID: d.SnapshotID, LastIncludedSeq: d.LastIncludedSeq,
		LastIncludedBatchID: d.LastIncludedBatchID, ProducerViewVersion: d.ProducerViewVersion, PayloadSize: d.PayloadSize,
		PayloadChecksum: d.PayloadChecksum, CreatedAtMS: d.CreatedAtMS, ObjectPrefix: d.ObjectPrefix}
}

// Agree checks that pointer p and the descriptor it names say the same (RFC
// "Payload Envelope": descriptor, manifest, pointer and envelope must
// agree); a mismatch is ErrIdentity.
func (d Descriptor) Agree(p contract.Pointer) error {
	if d.Pointer() != p {
		return fmt.Errorf("%w: pointer %+v, descriptor %+v", ErrIdentity, p, d.Pointer())
	}
	return nil
}

// Legacy reports a descriptor decoded from the three-field legacy form.
func (d Descriptor) Legacy() bool { return d.SchemaVersion == 0 }

// Encode renders a schema-v1 descriptor as JSON.
func (d Descriptor) Encode() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return json.MarshalIndent(d, "", "  ")
}

// Validate checks a schema-v1 descriptor on its own.
func (d Descriptor) Validate() error {
	if d.SchemaVersion != DescriptorSchemaVersion {
		return fmt.Errorf("%w: descriptor schema %d", ErrVersion, d.SchemaVersion)
	}
	if (d.LastIncludedSeq == 0) != (d.LastIncludedBatchID == 0) {
		return fmt.Errorf("%w: seq %d with batch %d", ErrCursorMismatch, d.LastIncludedSeq, d.LastIncludedBatchID)
	}
	if d.LastIncludedSeq < d.LastIncludedBatchID {
		return fmt.Errorf("%w: seq %d below batch %d", ErrCursorMismatch, d.LastIncludedSeq, d.LastIncludedBatchID)
	}
	if _, err := ParseID(d.SnapshotID); err != nil {
		return err
	}
	if id, _ := ParseID(d.SnapshotID); id.BatchID != d.LastIncludedBatchID {
		return fmt.Errorf("%w: id %s names batch %d, descriptor %d", ErrIdentity, d.SnapshotID, id.BatchID, d.LastIncludedBatchID)
	}
	if _, _, err := ParseChecksum(d.PayloadChecksum); err != nil {
		return err
	}
	if d.ManifestKey == "" || d.ObjectPrefix == "" || !strings.HasPrefix(d.ManifestKey, d.ObjectPrefix) {
		return malformed("manifest key %q outside object prefix %q", d.ManifestKey, d.ObjectPrefix)
	}
	if d.ProducerViewVersion == 0 && d.LastIncludedBatchID != 0 {
		return malformed("producer view 0 with a non-empty cursor")
	}
	if d.CreatedAtMS <= 0 {
		return malformed("created_at_ms %d", d.CreatedAtMS)
	}
	return nil
}

// DecodeDescriptor decodes a schema-v1 JSON descriptor (strict: no unknown
// fields) or a legacy `<last_included_seq>|<producer_view_version>|<created_at_ms>`.
func DecodeDescriptor(data []byte) (Descriptor, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] != '{' {
		return decodeLegacy(trimmed)
	}
	var d Descriptor
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Descriptor{}, malformed("descriptor: %v", err)
	}
	if dec.More() {
		return Descriptor{}, fmt.Errorf("%w: after the descriptor", ErrTrailing)
	}
	if err := d.Validate(); err != nil {
		return Descriptor{}, err
	}
	return d, nil
}

func decodeLegacy(data []byte) (Descriptor, error) {
	parts := strings.Split(string(data), "|")
	if len(parts) != 3 {
		return Descriptor{}, malformed("legacy descriptor: %d fields, want 3", len(parts))
	}
	var nums [3]uint64
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') {
			return Descriptor{}, malformed("legacy descriptor field %d %q", i, p)
		}
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return Descriptor{}, fmt.Errorf("%w: legacy descriptor field %d %q", ErrOverflow, i, p)
		}
		nums[i] = v
	}
	if nums[2] > 1<<62 {
		return Descriptor{}, fmt.Errorf("%w: created_at_ms %d", ErrOverflow, nums[2])
	}
	return Descriptor{LastIncludedSeq: nums[0], ProducerViewVersion: nums[1], CreatedAtMS: int64(nums[2])}, nil
}

// EncodeLegacy renders the legacy three-field form (fixtures and tests only:
// writers never emit it).
func EncodeLegacy(seq, view uint64, createdAtMS int64) []byte {
	return []byte(fmt.Sprintf("%d|%d|%d", seq, view, createdAtMS))
}
