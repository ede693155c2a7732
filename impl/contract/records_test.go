package contract

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The records below were written by impl/publish and impl/legacy before the
// records moved here; the bytes must not change (publication compares raw
// pointer values in its transactions, and namespaces already hold them).
const (
	goldenPointer = `{"pointer_schema_version":1,"snapshot_id":"00000000000000000042-10-00112233445566aa","last_included_seq":126,` +
		`"last_included_batch_id":42,"producer_view_version":2,"payload_size":1000,"payload_checksum":"crc64nvme:AQIDBAUGBwg=",` +
		`"created_at_ms":1700000000123,"object_prefix":"snapshots/c1/00000000000000000042-10-00112233445566aa"}`
	goldenImportRecord = `{"schema_version":1,"legacy_cluster_id":"old","legacy_snapshot_id":"20260620_143012_007","legacy_last_included_seq":120,` +
		`"legacy_producer_view_version":3,"legacy_created_at_ms":1700000000000,"snapshot_id":"00000000000000000001-10-00112233445566aa",` +
		`"batch_id":1,"last_seq":120,"producer_view_version":4,"objects":11,"segments":2,"state_digest":"sha256:ab",` +
		`"imported_at_ms":1700000000999,"imported_by":"node-a"}`
	goldenImportBatch = `[1,1,120,120,[[4,"","",""]],3244460687]`
)

func goldenPointerValue() Pointer {
	id := SnapshotID{BatchID: 42, Lease: 0x10, Random: "00112233445566aa"}
	return Pointer{PointerSchemaVersion: 1, SnapshotID: id.String(), LastIncludedBatchID: 42, LastIncludedSeq: 126,
		ProducerViewVersion: 2, PayloadSize: 1000, PayloadChecksum: CRC64NVME(0x0102030405060708), CreatedAtMS: 1700000000123,
		ObjectPrefix: "snapshots/c1/" + id.String()}
}

func TestPointerGolden(t *testing.T) {
	p := goldenPointerValue()
	enc, err := p.Encode()
	if err != nil || string(enc) != goldenPointer {
		t.Fatalf("Encode = %s, %v\nwant %s", enc, err, goldenPointer)
	}
	back, err := DecodePointer([]byte(goldenPointer))
	if err != nil || back != p {
		t.Fatalf("DecodePointer = %+v, %v", back, err)
	}
	if c := back.Cursor(); c != (Cursor{BatchID: 42, Seq: 126}) || !c.Consistent() || c.String() != "batch 42 seq 126" {
		t.Fatalf("Cursor = %v", c)
	}
}

// TestPointerRefuses: a pointer that is invalid, or valid but not in the
// one encoding, is ErrMalformedPointer (and so ErrMalformed).
func TestPointerRefuses(t *testing.T) {
	for name, mutate := range map[string]func(*Pointer){
		"schema":         func(p *Pointer) { p.PointerSchemaVersion = 2 },
		"bad id":         func(p *Pointer) { p.SnapshotID = "x" },
		"id mismatch":    func(p *Pointer) { p.LastIncludedBatchID = 41 },
		"zero seq":       func(p *Pointer) { p.LastIncludedSeq = 0 },
		"seq below":      func(p *Pointer) { p.LastIncludedSeq = 41 },
		"checksum tag":   func(p *Pointer) { p.PayloadChecksum = "abc" },
		"checksum algo":  func(p *Pointer) { p.PayloadChecksum = "md5:AQIDBAUGBwg=" },
		"no size":        func(p *Pointer) { p.PayloadSize = 0 },
		"no prefix":      func(p *Pointer) { p.ObjectPrefix = "" },
		"no create time": func(p *Pointer) { p.CreatedAtMS = 0 },
	} {
		p := goldenPointerValue()
		mutate(&p)
		if _, err := p.Encode(); !errors.Is(err, ErrMalformedPointer) || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Encode: %v", name, err)
		}
	}
	for _, raw := range []string{"", "{}", goldenPointer + " ", " " + goldenPointer, goldenPointer + goldenPointer,
		strings.Replace(goldenPointer, `{`, `{"x":1,`, 1),
		strings.Replace(goldenPointer, `"snapshot_id":"00000000000000000042-10-00112233445566aa","last_included_seq":126`,
			`"last_included_seq":126,"snapshot_id":"00000000000000000042-10-00112233445566aa"`, 1),
	} {
		if _, err := DecodePointer([]byte(raw)); !errors.Is(err, ErrMalformedPointer) {
			t.Errorf("DecodePointer(%q): %v", raw, err)
		}
	}
	_, err := DecodePointer([]byte("{}"))
	if !strings.HasPrefix(err.Error(), "malformed snapshot pointer: ") {
		t.Errorf("message %q", err)
	}
}

func TestSnapshotID(t *testing.T) {
	id := SnapshotID{BatchID: 42, Lease: 0xabc, Random: "00112233445566aa"}
	if id.String() != "00000000000000000042-abc-00112233445566aa" {
		t.Fatalf("String = %s", id)
	}
	back, err := ParseSnapshotID(id.String())
	if err != nil || back != id {
		t.Fatalf("ParseSnapshotID = %+v, %v", back, err)
	}
	top := SnapshotID{BatchID: math.MaxUint64, Lease: math.MaxInt64, Random: "ffffffffffffffff"}
	if back, err := ParseSnapshotID(top.String()); err != nil || back != top {
		t.Fatalf("ParseSnapshotID(%s) = %+v, %v", top, back, err)
	}
	for _, bad := range []string{"", "x", "42-abc-00112233445566aa", "00000000000000000042-ABC-00112233445566aa",
		"00000000000000000042--00112233445566aa", "00000000000000000042-abc-00112233445566a", "00000000000000000042-abc-00112233445566aa/",
		"99999999999999999999-1-00112233445566aa", "00000000000000000001-8000000000000000-00112233445566aa",
		"00000000000000000001-00000000000000001-00112233445566aa"} {
		if _, err := ParseSnapshotID(bad); !errors.Is(err, ErrSnapshotID) || !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseSnapshotID(%q): %v", bad, err)
		}
	}
}

func TestChecksumString(t *testing.T) {
	c := CRC64NVME(0x0102030405060708)
	if c != "crc64nvme:AQIDBAUGBwg=" || S3Base64(0x0102030405060708) != "AQIDBAUGBwg=" {
		t.Fatalf("CRC64NVME = %s", c)
	}
	alg, v, err := ParseChecksum(c)
	if err != nil || alg != ChecksumAlgorithm || v != 0x0102030405060708 {
		t.Fatalf("ParseChecksum = %s, %x, %v", alg, v, err)
	}
	for bad, want := range map[Checksum]error{
		"": ErrChecksumTag, "AQIDBAUGBwg=": ErrChecksumTag, ":AQIDBAUGBwg=": ErrChecksumTag, "crc64nvme:": ErrChecksumTag,
		"crc64nvme:AQID": ErrChecksumTag, "crc64nvme:AQIDBAUGBwg": ErrChecksumTag, "crc64nvme:AQIDBAUGBwgJ": ErrChecksumTag,
		"md5:AQIDBAUGBwg=": ErrVersion, "CRC64NVME:AQIDBAUGBwg=": ErrVersion,
	} {
		if _, _, err := ParseChecksum(bad); !errors.Is(err, want) || errors.Is(err, ErrMalformed) != (want == ErrChecksumTag) {
			t.Errorf("ParseChecksum(%q): %v, want %v", bad, err, want)
		}
	}
}

func goldenImportRecordValue() ImportRecord {
	return ImportRecord{SchemaVersion: 1, LegacyClusterID: "old", LegacySnapshotID: "20260620_143012_007", LegacySeq: 120,
		LegacyProducerView: 3, LegacyCreatedAtMS: 1700000000000, SnapshotID: "00000000000000000001-10-00112233445566aa",
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
	if back.Cursor() != (Cursor{BatchID: 1, Seq: 120}) {
		t.Fatalf("Cursor = %v", back.Cursor())
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
		var ce *Error
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &ce) || !strings.HasPrefix(ce.Reason, "import record") {
			t.Errorf("DecodeImportRecord(%q): %v", raw, err)
		}
	}
}

func TestLegacySnapshotID(t *testing.T) {
	if err := CheckLegacySnapshotID("20260620_143012_007"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "x", "20260620_143012_07", "20260620-143012-007", "20261320_143012_007", "20260230_143012_007", "20260620_246012_007"} {
		if err := CheckLegacySnapshotID(bad); !errors.Is(err, ErrLegacySnapshotID) || !errors.Is(err, ErrMalformed) {
			t.Errorf("CheckLegacySnapshotID(%q): %v", bad, err)
		}
	}
	if err := CheckLegacySnapshotID("x"); err.Error() != `legacy snapshot id malformed: "x": want YYYYMMDD_HHMMSS_mmm` {
		t.Errorf("message %q", err)
	}
}

func TestImportBatchGolden(t *testing.T) {
	b := ImportBatch(Cursor{BatchID: 1, Seq: 120})
	enc, err := EncodeBatch(b)
	if err != nil || string(enc) != goldenImportBatch {
		t.Fatalf("EncodeBatch(ImportBatch) = %s, %v\nwant %s", enc, err, goldenImportBatch)
	}
	back, err := DecodeBatch(enc)
	if err != nil || back.ID != 1 || back.FirstSeq != 120 || back.LastSeq != 120 || len(back.Entries) != 1 || back.Entries[0].Op != OpLeaseRenew {
		t.Fatalf("DecodeBatch = %+v, %v", back, err)
	}
	if enc, err := EncodeBatch(ImportBatch(Cursor{BatchID: 1, Seq: 1})); err != nil || !strings.HasPrefix(string(enc), `[1,1,1,1,[[4,"","",""]],`) {
		t.Fatalf("at seq 1: %s, %v", enc, err)
	}
}

func FuzzDecodePointer(f *testing.F) {
	f.Add([]byte(goldenPointer))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePointer(data)
		if err != nil {
			if !errors.Is(err, ErrMalformedPointer) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if enc, err := p.Encode(); err != nil || string(enc) != string(data) {
			t.Fatalf("accepted %q, which encodes to %q, %v", data, enc, err)
		}
	})
}

func FuzzDecodeImportRecord(f *testing.F) {
	f.Add([]byte(goldenImportRecord))
	f.Add([]byte(`{"schema_version":1,"legacy_snapshot_id":"20260620_143012_007","batch_id":1,"last_seq":5}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeImportRecord(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
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
