package legacy

import (
	"errors"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/state"
)

// The import record and batch 1 of an import are the contract's
// (impl/contract/importrecord.go): the harness reads them through
// impl/contract, and an import writes what that decodes. These names keep
// the implementation's callers as they were.

// MarkerSchemaVersion is the schema of the import record.
const MarkerSchemaVersion = legacysnap.ImportRecordSchemaVersion

// Marker is the import record at /oplog/{c}/snapshot/legacy_import: which
// old snapshot was imported, the schema-v1 snapshot it became, and the
// content it carried (legacysnap.ImportRecord).
type Marker = legacysnap.ImportRecord

// DecodeMarker parses an import record strictly (legacysnap.DecodeImportRecord).
// A record that does not decode is ErrMalformed, as a legacy snapshot that
// does not: an import refuses to go on (the process exits).
func DecodeMarker(data []byte) (Marker, error) {
	m, err := legacysnap.DecodeImportRecord(data)
	if err != nil {
		reason := err.Error()
		var ce *contract.Error
		if errors.As(err, &ce) {
			reason = ce.Reason
		}
		return Marker{}, fmt.Errorf("%w: %s", ErrMalformed, reason)
	}
	return m, nil
}

// ImportBatch is the record an import writes as batch cur.BatchID (1), the
// terminal batch of the durable prefix it puts at cur:
// [1,1,S,S,[[4,"","",""]],checksum] with S = cur.Seq. See
// legacysnap.ImportBatch for why it is that batch.
func ImportBatch(cur state.Cursor) batchlog.Batch { return legacysnap.ImportBatch(cur) }
