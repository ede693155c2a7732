package keyspace

import (
	"math"
	"strings"
	"testing"
)

// TestKeyspaceKeys pins every key a Keyspace names: the upstream keys (as
// keys.jsonl has them) and the RFC's.
func TestKeyspaceKeys(t *testing.T) {
	ks := Must("c1")
	for got, want := range map[string]string{
		ks.Root():                "/oplog/c1",
		ks.BatchPrefix():         "/oplog/c1/batches/",
		ks.Batch(42):             "/oplog/c1/batches/00000000000000000042",
		ks.DurablePrefix():       "/oplog/c1/durable_prefix",
		ks.ProducerView():        "/oplog/c1/producer_view",
		ks.Leader():              "/oplog/c1/leader",
		ks.LeaderCandidates():    "/oplog/c1/leader/",
		ks.SnapshotPrefix():      "/oplog/c1/snapshot/",
		ks.SnapshotMaintenance(): "/oplog/c1/snapshot/maintenance",
		ks.SnapshotLatest():      "/oplog/c1/snapshot/latest",
		ks.SnapshotFallback():    "/oplog/c1/snapshot/fallback",
		ks.CompactionFloor():     "/oplog/c1/snapshot/compaction_floor",
		ks.LegacyImport():        "/oplog/c1/snapshot/legacy_import",
	} {
		if got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	}
	for _, k := range []string{ks.SnapshotMaintenance(), ks.SnapshotLatest(), ks.SnapshotFallback(), ks.CompactionFloor(), ks.LegacyImport()} {
		if !strings.HasPrefix(k, ks.SnapshotPrefix()) {
			t.Errorf("%q is not under %q", k, ks.SnapshotPrefix())
		}
	}
	var zero Keyspace
	if zero.Batch(1) != "" || zero.DurablePrefix() != "" || zero.Root() != "" {
		t.Error("the zero Keyspace names keys")
	}
}

func TestKeyspaceBatchKeysSortNumerically(t *testing.T) {
	ks := Must("c1")
	ids := []uint64{1, 9, 10, 99, 100, 1 << 40, math.MaxUint64}
	for i := 1; i < len(ids); i++ {
		if ks.Batch(ids[i-1]) >= ks.Batch(ids[i]) {
			t.Errorf("batch %d sorts after batch %d", ids[i-1], ids[i])
		}
	}
	if id, ok := ks.ParseBatch(ks.Batch(math.MaxUint64)); !ok || id != math.MaxUint64 {
		t.Errorf("ParseBatch(max) = %d, %v", id, ok)
	}
	for _, bad := range []string{"/oplog/c1/batches/42", "/oplog/c2/batches/00000000000000000042",
		"/oplog/c1/batches/0000000000000000004x", "/oplog/c1/durable_prefix"} {
		if _, ok := ks.ParseBatch(bad); ok {
			t.Errorf("ParseBatch(%q) accepted", bad)
		}
	}
}

// TestKeyspaceClusterIDs: NewKeyspace takes what upstream takes, normalized,
// and refuses the rest saying why.
func TestKeyspaceClusterIDs(t *testing.T) {
	for id, root := range map[string]string{"prod-1.eu_west": "/oplog/prod-1.eu_west", "-x": "/oplog/-x", "_": "/oplog/_",
		"c1/": "/oplog/c1", "c1//": "/oplog/c1"} {
		ks, err := New(id)
		if err != nil {
			t.Errorf("New(%q): %v", id, err)
			continue
		}
		if ks.Root() != root {
			t.Errorf("New(%q).Root() = %q, want %q", id, ks.Root(), root)
		}
	}
	for id, why := range map[string]string{
		"":                             "empty",
		"/":                            "empty",
		"a/b":                          `byte 1 ('/')`,
		"a b":                          `byte 1 (' ')`,
		"é":                            "byte 0",
		strings.Repeat("x", 129):       "129 bytes, at most 128",
		strings.Repeat("x", 128) + "/": "",
	} {
		_, err := New(id)
		if why == "" {
			if err != nil {
				t.Errorf("New(%q): %v", id, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("New(%q) = %v, want an error saying %q", id, err, why)
		}
	}
}
