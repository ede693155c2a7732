package legacysnap

import (
	"errors"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

// The records below were written by impl/legacy before the records moved
// into the contract; the bytes must not change (namespaces hold them).
const (
	goldenImportRecord = `{"schema_version":1,"legacy_cluster_id":"old","legacy_snapshot_id":"20260620_143012_007","legacy_last_included_seq":120,` +
		`"legacy_producer_view_version":3,"legacy_created_at_ms":1700000000000,"snapshot_id":"1-16",` +
		`"batch_id":1,"last_seq":120,"producer_view_version":4,"objects":11,"segments":2,"state_digest":"sha256:ab",` +
		`"imported_at_ms":1700000000999,"imported_by":"node-a"}`
	goldenImportBatch = `[1,1,120,120,[[4,"","",""]],3244460687]`
)

func goldenImportRecordValue() ImportRecord {
	return ImportRecord{SchemaVersion: 1, LegacyClusterID: "old", LegacySnapshotID: "20260620_143012_007", LegacySeq: 120,
		LegacyProducerView: 3, LegacyCreatedAtMS: 1700000000000, SnapshotID: "1-16",
		BatchID: 1, LastSeq: 120, ProducerView: 4, Objects: 11, Segments: 2, StateDigest: "sha256:ab",
		ImportedAtMS: 1700000000999, ImportedBy: "node-a"}
}

func TestImportRecordGolden(t *testing.T) {
	m := goldenImportRecordValue()
	if got := string(m.Encode()); got != goldenImportRecord {
		t.Fatalf("Encode = %s\nwant %s", got, goldenImportRecord)
	}
	back, err := DecodeImportRecord([]byte(goldenImportRecord))
	if err != nil || back != m {
		t.Fatalf("DecodeImportRecord = %+v, %v", back, err)
	}
	if back.Cursor() != (contract.Cursor{BatchID: 1, Seq: 120}) {
		t.Fatalf("contract.Cursor = %v", back.Cursor())
	}
	// Members in any order, and whitespace, are read (the record is
	// evidence, never compared by value).
	if _, err := DecodeImportRecord([]byte(` {"last_seq":5,"batch_id":1,"legacy_snapshot_id":"20260620_143012_007","schema_version":1} `)); err != nil {
		t.Fatalf("reordered: %v", err)
	}
}

func TestImportRecordRefuses(t *testing.T) {
	for _, raw := range []string{"", "{}", "[]", `{"schema_version":2}`,
		`{"schema_version":1,"legacy_snapshot_id":"x","batch_id":1,"last_seq":5}`,
		`{"schema_version":1,"legacy_snapshot_id":"20261320_143012_007","batch_id":1,"last_seq":5}`,
		`{"schema_version":1,"legacy_snapshot_id":"20260620_143012_007","batch_id":2,"last_seq":5}`,
		`{"schema_version":1,"legacy_snapshot_id":"20260620_143012_007","batch_id":1,"last_seq":0}`,
		`{"schema_version":1,"legacy_snapshot_id":"20260620_143012_007","batch_id":1,"last_seq":5,"x":1}`,
		`{"schema_version":1,"legacy_snapshot_id":"20260620_143012_007","batch_id":1,"last_seq":5} {}`,
	} {
		_, err := DecodeImportRecord([]byte(raw))
		var ce *contract.Error
		if !errors.Is(err, contract.ErrMalformed) || !errors.As(err, &ce) || !strings.HasPrefix(ce.Reason, "import record") {
			t.Errorf("DecodeImportRecord(%q): %v", raw, err)
		}
	}
}

func TestLegacySnapshotID(t *testing.T) {
	if err := CheckLegacySnapshotID("20260620_143012_007"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "x", "20260620_143012_07", "20260620-143012-007", "20261320_143012_007", "20260230_143012_007", "20260620_246012_007"} {
		if err := CheckLegacySnapshotID(bad); !errors.Is(err, contract.ErrLegacySnapshotID) || !errors.Is(err, contract.ErrMalformed) {
			t.Errorf("CheckLegacySnapshotID(%q): %v", bad, err)
		}
	}
	if err := CheckLegacySnapshotID("x"); err.Error() != `legacy snapshot id malformed: "x": want YYYYMMDD_HHMMSS_mmm` {
		t.Errorf("message %q", err)
	}
}

func TestImportBatchGolden(t *testing.T) {
	b := ImportBatch(contract.Cursor{BatchID: 1, Seq: 120})
	enc, err := batchlog.EncodeBatch(b)
	if err != nil || string(enc) != goldenImportBatch {
		t.Fatalf("batchlog.EncodeBatch(ImportBatch) = %s, %v\nwant %s", enc, err, goldenImportBatch)
	}
	back, err := batchlog.DecodeBatch(enc)
	if err != nil || back.ID != 1 || back.FirstSeq != 120 || back.LastSeq != 120 || len(back.Entries) != 1 || back.Entries[0].Op != batchlog.OpLeaseRenew {
		t.Fatalf("batchlog.DecodeBatch = %+v, %v", back, err)
	}
	if enc, err := batchlog.EncodeBatch(ImportBatch(contract.Cursor{BatchID: 1, Seq: 1})); err != nil || !strings.HasPrefix(string(enc), `[1,1,1,1,[[4,"","",""]],`) {
		t.Fatalf("at seq 1: %s, %v", enc, err)
	}
}

func FuzzDecodeImportRecord(f *testing.F) {
	f.Add([]byte(goldenImportRecord))
	f.Add([]byte(`{"schema_version":1,"legacy_snapshot_id":"20260620_143012_007","batch_id":1,"last_seq":5}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeImportRecord(data)
		if err != nil {
			if !errors.Is(err, contract.ErrMalformed) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if m.BatchID != 1 || m.LastSeq == 0 || CheckLegacySnapshotID(m.LegacySnapshotID) != nil {
			t.Fatalf("accepted %+v", m)
		}
		if back, err := DecodeImportRecord(m.Encode()); err != nil || back != m {
			t.Fatalf("re-encoded %+v does not decode back: %+v, %v", m, back, err)
		}
	})
}
