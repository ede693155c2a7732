package batchlog

import (
	"testing"

	"github.com/oplogha/oplogha/impl/contract"
)

// TestKeyVectors: every key upstream builds, for valid and invalid cluster ids.
func TestKeyVectors(t *testing.T) {
	vs := readVectors[keyVector](t, "keys.jsonl")
	for _, v := range vs {
		name := v.ClusterID + "/" + itoa(v.BatchID)
		t.Run(name, func(t *testing.T) {
			if got := BuildBatchRecordKey(v.ClusterID, v.BatchID); got != v.BatchKey {
				t.Errorf("BuildBatchRecordKey = %q, want %q", got, v.BatchKey)
			}
			if got := BuildDurablePrefixKey(v.ClusterID); got != v.DurablePrefixKey {
				t.Errorf("BuildDurablePrefixKey = %q, want %q", got, v.DurablePrefixKey)
			}
			if got := BuildProducerViewKey(v.ClusterID); got != v.ProducerViewKey {
				t.Errorf("BuildProducerViewKey = %q, want %q", got, v.ProducerViewKey)
			}
			begin, end := BuildBatchRecordRange(v.ClusterID, v.BatchID)
			if want := string(mustB64(t, v.RangeBeginB64)); begin != want {
				t.Errorf("range begin = %q, want %q", begin, want)
			}
			if want := string(mustB64(t, v.RangeEndB64)); end != want {
				t.Errorf("range end = %q, want %q", end, want)
			}
			if v.BatchKey == "" {
				return
			}
			if id, ok := ParseBatchIDFromKey(v.BatchKey); !ok || id != v.BatchID {
				t.Errorf("ParseBatchIDFromKey = %d, %v", id, ok)
			}
			if id, ok := ParseBatchRecordKey(v.ClusterID, v.BatchKey); !ok || id != v.BatchID {
				t.Errorf("ParseBatchRecordKey = %d, %v", id, ok)
			}
			if begin < v.BatchKey+"\x00" && v.BatchID != ^uint64(0) {
				t.Errorf("range after %d begins at or before its own key", v.BatchID)
			}
		})
	}
	t.Logf("%d keys.jsonl vectors", len(vs))
}

func TestClusterIDRule(t *testing.T) {
	for id, want := range map[string]string{
		"a": "a", "c-1.x/": "c-1.x", "c//": "c", "-a": "-a", "_": "_", "..": "..",
		"": "", "/": "", "a b": "", "a/b": "", "é": "",
		string(make([]byte, 129)): "",
	} {
		got, ok := contract.NormalizeClusterID(id)
		if got != want || ok != (want != "") {
			t.Errorf("contract.NormalizeClusterID(%q) = %q, %v", id, got, ok)
		}
	}
	long := ""
	for range 128 {
		long += "x"
	}
	if _, ok := contract.NormalizeClusterID(long); !ok {
		t.Error("128-byte id refused")
	}
	if _, ok := contract.NormalizeClusterID(long + "x"); ok {
		t.Error("129-byte id accepted")
	}
}

func TestParseBatchIDFromKey(t *testing.T) {
	for key, want := range map[string]bool{
		"/oplog/c/batches/00000000000000000007":  true,
		"/oplog/c/batches/18446744073709551615":  true,
		"/oplog/c/batches/18446744073709551616":  false, // overflows uint64
		"/oplog/c/batches/0000000000000000007":   false, // 19 digits
		"/oplog/c/batches/000000000000000000007": false, // 21 digits
		"/oplog/c/batches/0000000000000000000x":  false,
		"00000000000000000007":                   false, // no slash
	} {
		if _, ok := ParseBatchIDFromKey(key); ok != want {
			t.Errorf("ParseBatchIDFromKey(%q) ok = %v", key, ok)
		}
	}
	if _, ok := ParseBatchRecordKey("c", "/oplog/d/batches/00000000000000000007"); ok {
		t.Error("ParseBatchRecordKey accepted another cluster's key")
	}
}
