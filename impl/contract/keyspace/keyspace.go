// Package keyspace names every etcd key of one cluster, under
// /oplog/{cluster_id}: the batch OpLog's keys as upstream names them
// (impl/contract/batchlog), the snapshot control keys as upstream names them
// (impl/contract/batchsnap: maintenance, latest, fallback,
// compaction_floor), and the project's own: the election prefix "leader" and
// the legacy import record (impl/contract/legacysnap). A master, the
// harness and the operator's tools name a key the same way through it.
package keyspace

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

// Keyspace names the keys of one cluster. The zero Keyspace names nothing
// (every key is ""); build one with New.
type Keyspace struct {
	id string // normalized cluster id
}

// New returns the keyspace of clusterID under upstream's cluster id rule
// (contract.NormalizeClusterID): 1-128 bytes of [0-9A-Za-z_.-] once
// trailing slashes are dropped. An id upstream refuses is an error saying why.
func New(clusterID string) (Keyspace, error) {
	id, ok := contract.NormalizeClusterID(clusterID)
	if !ok {
		return Keyspace{}, fmt.Errorf("cluster id %q: %s", clusterID, contract.ClusterIDProblem(clusterID))
	}
	return Keyspace{id: id}, nil
}

// Must is New for ids known to be valid (tests, constants).
func Must(clusterID string) Keyspace {
	ks, err := New(clusterID)
	if err != nil {
		panic(err)
	}
	return ks
}

// ClusterID is the normalized cluster id.
func (k Keyspace) ClusterID() string { return k.id }

// Root is the namespace prefix "/oplog/<cluster>"; every key of the cluster
// starts with Root()+"/".
func (k Keyspace) Root() string {
	if k.id == "" {
		return ""
	}
	return "/oplog/" + k.id
}

func (k Keyspace) under(suffix string) string {
	if k.id == "" {
		return ""
	}
	return k.Root() + suffix
}

// BatchPrefix is the prefix of every batch record key.
func (k Keyspace) BatchPrefix() string { return batchlog.BatchRecordPrefix(k.id) }

// Batch is the key of batch id.
func (k Keyspace) Batch(id uint64) string { return batchlog.BuildBatchRecordKey(k.id, id) }

// ParseBatch returns the batch id of a batch record key of this cluster, or
// false when key is not one.
func (k Keyspace) ParseBatch(key string) (uint64, bool) {
	return batchlog.ParseBatchRecordKey(k.id, key)
}

// DurablePrefix is the key of the durable prefix record.
func (k Keyspace) DurablePrefix() string { return batchlog.BuildDurablePrefixKey(k.id) }

// ProducerView is the key of the producer view.
func (k Keyspace) ProducerView() string { return batchlog.BuildProducerViewKey(k.id) }

// Leader is the election prefix (the project's; upstream's master keeps
// its view under mooncake-store/<cluster>/master_view instead).
func (k Keyspace) Leader() string { return k.under("/leader") }

// LeaderCandidates is the prefix of the election's candidate keys: an
// etcd election (concurrency.NewElection on Leader) puts each candidate at
// Leader()+"/"+its lease id, and the oldest is the leader.
func (k Keyspace) LeaderCandidates() string { return k.under("/leader/") }

// SnapshotPrefix is the prefix of every snapshot control key (maintenance,
// pointers, compaction floor) and of the legacy import record.
func (k Keyspace) SnapshotPrefix() string { return batchsnap.ControlPrefix(k.id) }

// SnapshotMaintenance is the maintenance lease's key (upstream's name).
func (k Keyspace) SnapshotMaintenance() string { return batchsnap.MaintenanceKey(k.id) }

// SnapshotLatest is the latest pointer.
func (k Keyspace) SnapshotLatest() string { return batchsnap.LatestKey(k.id) }

// SnapshotFallback is the fallback pointer.
func (k Keyspace) SnapshotFallback() string { return batchsnap.FallbackKey(k.id) }

// CompactionFloor is the compaction floor record.
func (k Keyspace) CompactionFloor() string { return batchsnap.CompactionFloorKey(k.id) }

// LegacyImport is the record of an explicit legacy snapshot import, written
// once, in the same transaction that installs the imported snapshot as the
// latest pointer.
func (k Keyspace) LegacyImport() string { return legacysnap.BuildLegacyImportKey(k.id) }
