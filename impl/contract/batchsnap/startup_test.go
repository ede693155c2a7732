package batchsnap

import (
	"testing"
)

// TestUpstreamStartupRefusesItsOwnSnapshotKeys shows a conflict inside
// upstream at kvcache-ai/Mooncake 3b5a594, written so it can be reported
// there: OpLogBatchStorage::InitDurablePrefix calls RejectLegacyLayout
// (mooncake-store/src/ha/oplog/oplog_batch_storage.cpp:83), which refuses to
// start ("Legacy OpLog snapshot sidecar exists", INCOMPLETE_OPLOG_CATCH_UP,
// :519-530) when etcd holds any key in [/oplog/<c>/snapshot/,
// /oplog/<c>/snapshot0). The batch-OpLog snapshot code of the same commit
// names its four control keys (ha/snapshot/batch_oplog/metadata.cpp:248-255)
// inside exactly that range. So a master of that commit refuses to start in
// any namespace where a batch-OpLog snapshot was published, its floor moved
// or its maintenance lease taken. This project keeps upstream's key names
// and starts beside them; the conflict is recorded in impl/master/CONTRACT.md.
func TestUpstreamStartupRefusesItsOwnSnapshotKeys(t *testing.T) {
	for _, cluster := range []string{"cluster-a", "mooncake_cluster", "c1"} {
		begin, end := "/oplog/"+cluster+"/snapshot/", "/oplog/"+cluster+"/snapshot0"
		for name, key := range map[string]string{
			"maintenance":      MaintenanceKey(cluster),
			"latest":           LatestKey(cluster),
			"fallback":         FallbackKey(cluster),
			"compaction_floor": CompactionFloorKey(cluster),
		} {
			if !(begin <= key && key < end) {
				t.Errorf("%s key %q is outside [%q, %q): upstream's RejectLegacyLayout would not see it", name, key, begin, end)
			}
		}
	}
}
