package legacysnap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

// ImportRecordSchemaVersion is the import record's schema_version.
const ImportRecordSchemaVersion = 1

// ImportRecord is the value of /oplog/<c>/snapshot/legacy_import, written in
// the transaction that imports a snapshot of upstream's legacy (pre batch
// OpLog) master into a fresh namespace: which legacy snapshot was imported,
// the schema-v1 snapshot it became (the latest pointer at batch 1), and the
// content it carried. It is written once and never changed; it is evidence
// for operators and auditors, never a recovery input. The record is the
// project's (impl/master/CONTRACT.md §3, "Legacy import"); the RFC asks only
// that legacy snapshots stay readable for an explicit import ("Legacy
// Snapshot Removal and Lock Cleanup"). Compact JSON, the fields in this
// order, as Encode writes it.
type ImportRecord struct {
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
func (m ImportRecord) Encode() []byte {
	data, _ := json.Marshal(m) // only plain fields: cannot fail
	return data
}

// Cursor is where the import put the namespace: batch 1 and the imported
// sequence, the latest pointer's cursor and the durable prefix's.
func (m ImportRecord) Cursor() contract.Cursor {
	return contract.Cursor{BatchID: m.BatchID, Seq: m.LastSeq}
}

// DecodeImportRecord parses an import record strictly: no unknown field,
// nothing after the object, schema 1, an upstream legacy snapshot id
// (CheckLegacySnapshotID) and a cursor at batch 1 with a sequence. Members
// may come in any order. Failures are contract.ErrMalformed, the reason starting
// "import record".
func DecodeImportRecord(data []byte) (ImportRecord, error) {
	var m ImportRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return ImportRecord{}, contract.NewError(contract.ErrMalformed, "import record: "+err.Error())
	}
	if dec.More() {
		return ImportRecord{}, contract.NewError(contract.ErrMalformed, "import record: trailing data")
	}
	switch {
	case m.SchemaVersion != ImportRecordSchemaVersion:
		return ImportRecord{}, contract.NewError(contract.ErrMalformed, fmt.Sprintf("import record schema %d", m.SchemaVersion))
	case CheckLegacySnapshotID(m.LegacySnapshotID) != nil:
		return ImportRecord{}, contract.NewError(contract.ErrMalformed, fmt.Sprintf("import record names legacy id %q", m.LegacySnapshotID))
	case m.BatchID != 1 || m.LastSeq == 0:
		return ImportRecord{}, contract.NewError(contract.ErrMalformed, fmt.Sprintf("import record cursor batch %d seq %d, want batch 1 and a sequence", m.BatchID, m.LastSeq))
	}
	return m, nil
}

var legacySnapshotIDPattern = regexp.MustCompile(`^[0-9]{8}_[0-9]{6}_[0-9]{3}$`)

// CheckLegacySnapshotID validates the id of a snapshot upstream's legacy
// master wrote (its MasterSnapshotManager, the directory name under
// mooncake_master_snapshot/<cluster>/), YYYYMMDD_HHMMSS_mmm, including that
// it names a real calendar time. Failures are contract.ErrLegacySnapshotID.
func CheckLegacySnapshotID(id string) error {
	if !legacySnapshotIDPattern.MatchString(id) {
		return contract.NewError(contract.ErrLegacySnapshotID, strconv.Quote(id)+": want YYYYMMDD_HHMMSS_mmm")
	}
	if _, err := time.Parse("20060102_150405", id[:15]); err != nil {
		return contract.NewError(contract.ErrLegacySnapshotID, strconv.Quote(id)+": "+err.Error())
	}
	return nil
}

// ImportBatch is the batch record an import writes as batch cur.BatchID
// (1), the terminal batch of the durable prefix it puts at cur:
//
//	[1,1,S,S,[[4,"","",""]],checksum]    S = cur.Seq
//
// Upstream's master refuses at startup a durable prefix whose terminal batch
// is missing, is another batch or ends at another sequence
// (OpLogBatchStorage::ValidateDurablePrefixAtStartup and ReadBatch,
// oplog_batch_storage.cpp:261-304, :420-442 @3b5a594), so batch 1 must exist
// and end at S. A batch without entries is not a record: upstream's decoder
// refuses it ("batch sequence range does not match entry count",
// oplog_batch_codec.cpp:239-244; the vector entries_empty), as DecodeBatch
// does. So it holds one entry, the fewest a record can, at S: first_seq =
// last_seq = S, and the primary's next batch, 2, starts at S+1 as it does
// after any batch ending at S.
//
// The entry is the smallest one upstream's decoder accepts (empty tenant, key
// and payload), with the one op no applier accepts: LEASE_RENEW (upstream's
// OpLogApplier rejects it, oplog_applier.cpp:82-87, and impl/state's Apply
// with it). Batch 1 stands for the imported state, which only the pointer
// holds; an entry that applied (a REMOVE of a missing key, say) would let a
// replay from batch 0 — the complete-OpLog fallback, or an upstream standby
// without the snapshot — end at the prefix with a state that lacks the
// import. With S > 1 the sequence gap before batch 1 stops such a replay
// anyway; with S = 1 (a legacy snapshot at sequence 0) only the op does.
// Nothing applies it in the normal course: recovery starts from the pointer,
// at batch 1, and a node below the floor at 1 rebootstraps from that
// pointer. Once the prefix has moved past it, pruning deletes it like any
// batch at or below the floor.
//
// The record format is upstream's; which record an import writes is the
// project's rule, here so that the importer and an auditor build the same.
func ImportBatch(cur contract.Cursor) batchlog.Batch {
	return batchlog.Batch{ID: cur.BatchID, FirstSeq: cur.Seq, LastSeq: cur.Seq, Entries: []batchlog.Entry{{Op: batchlog.OpLeaseRenew}}}
}

// BuildLegacyImportKey is the import record's key,
// "/oplog/<cluster>/snapshot/legacy_import" ("" for an invalid cluster id):
// the project's, beside upstream's snapshot control keys.
func BuildLegacyImportKey(clusterID string) string {
	id, ok := contract.NormalizeClusterID(clusterID)
	if !ok {
		return ""
	}
	return "/oplog/" + id + "/snapshot/legacy_import"
}
