package legacy

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MarkerSchemaVersion is the schema of the import record.
const MarkerSchemaVersion = 1

// Marker is the import record at /oplog/{c}/snapshot/legacy_import: which
// old snapshot was imported, the schema-v1 snapshot it became, and the
// content it carried. It is written once and never changed; it is evidence
// for operators and auditors, never a recovery input.
type Marker struct {
	SchemaVersion      int    `json:"schema_version"`
	LegacyClusterID    string `json:"legacy_cluster_id"`
	LegacySnapshotID   string `json:"legacy_snapshot_id"`
	LegacySeq          uint64 `json:"legacy_last_included_seq"`
	LegacyProducerView uint64 `json:"legacy_producer_view_version"`
	LegacyCreatedAtMS  int64  `json:"legacy_created_at_ms"`
	SnapshotID         string `json:"snapshot_id"`
	BatchID            uint64 `json:"batch_id"`
	LastSeq            uint64 `json:"last_seq"`
	ProducerView       uint64 `json:"producer_view_version"`
	Objects            int    `json:"objects"`
	Segments           int    `json:"segments"`
	StateDigest        string `json:"state_digest"`
	ImportedAtMS       int64  `json:"imported_at_ms"`
	ImportedBy         string `json:"imported_by"`
}

// Encode renders the record as compact JSON.
func (m Marker) Encode() []byte {
	data, _ := json.Marshal(m) // only plain fields: cannot fail
	return data
}

// DecodeMarker parses an import record strictly.
func DecodeMarker(data []byte) (Marker, error) {
	var m Marker
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Marker{}, fmt.Errorf("%w: import record: %v", ErrMalformed, err)
	}
	if dec.More() {
		return Marker{}, fmt.Errorf("%w: import record: trailing data", ErrMalformed)
	}
	switch {
	case m.SchemaVersion != MarkerSchemaVersion:
		return Marker{}, fmt.Errorf("%w: import record schema %d", ErrMalformed, m.SchemaVersion)
	case CheckID(m.LegacySnapshotID) != nil:
		return Marker{}, fmt.Errorf("%w: import record names legacy id %q", ErrMalformed, m.LegacySnapshotID)
	case m.BatchID != 1 || m.LastSeq == 0:
		return Marker{}, fmt.Errorf("%w: import record cursor batch %d seq %d, want batch 1 and a sequence", ErrMalformed, m.BatchID, m.LastSeq)
	}
	return m, nil
}
