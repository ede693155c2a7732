package contract

import (
	"fmt"
	"strings"
)

// Keyspace names every etcd key of one cluster: the batch records, durable
// prefix and producer view as upstream names them, and the RFC's election,
// snapshot and legacy-import keys. Its methods call the builders of keys.go,
// so a master, the harness and the operator's tools name a key the same way.
// The zero Keyspace names nothing (every key is ""); build one with
// NewKeyspace.
type Keyspace struct {
	id string // normalized cluster id
}

// NewKeyspace returns the keyspace of clusterID under upstream's cluster id
// rule (NormalizeClusterID): 1-128 bytes of [0-9A-Za-z_.-] once trailing
// slashes are dropped. An id upstream refuses is an error saying why.
func NewKeyspace(clusterID string) (Keyspace, error) {
	id, ok := NormalizeClusterID(clusterID)
	if !ok {
		return Keyspace{}, fmt.Errorf("cluster id %q: %s", clusterID, clusterIDProblem(clusterID))
	}
	return Keyspace{id: id}, nil
}

// MustKeyspace is NewKeyspace for ids known to be valid (tests, constants).
func MustKeyspace(clusterID string) Keyspace {
	ks, err := NewKeyspace(clusterID)
	if err != nil {
		panic(err)
	}
	return ks
}

// clusterIDProblem says which part of upstream's rule clusterID breaks.
func clusterIDProblem(clusterID string) string {
	id := strings.TrimRight(clusterID, "/")
	switch {
	case id == "":
		return "empty (after dropping trailing slashes)"
	case len(id) > MaxClusterIDLen:
		return fmt.Sprintf("%d bytes, at most %d allowed", len(id), MaxClusterIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !clusterIDByte(id[i]) {
			return fmt.Sprintf("byte %d (%q) is not one of [0-9A-Za-z_.-]", i, id[i])
		}
	}
	return "refused by the cluster id rule"
}

// ClusterID is the normalized cluster id.
func (k Keyspace) ClusterID() string { return k.id }

// Root is the namespace prefix "/oplog/<cluster>"; every key of the cluster
// starts with Root()+"/".
func (k Keyspace) Root() string { return root(k.id) }

// BatchPrefix is the prefix of every batch record key.
func (k Keyspace) BatchPrefix() string { return BatchRecordPrefix(k.id) }

// Batch is the key of batch id.
func (k Keyspace) Batch(id uint64) string { return BuildBatchRecordKey(k.id, id) }

// ParseBatch returns the batch id of a batch record key of this cluster, or
// false when key is not one.
func (k Keyspace) ParseBatch(key string) (uint64, bool) { return ParseBatchRecordKey(k.id, key) }

// DurablePrefix is the key of the durable prefix record.
func (k Keyspace) DurablePrefix() string { return BuildDurablePrefixKey(k.id) }

// ProducerView is the key of the producer view.
func (k Keyspace) ProducerView() string { return BuildProducerViewKey(k.id) }

// Leader is the election prefix.
func (k Keyspace) Leader() string { return BuildLeaderKey(k.id) }

// LeaderCandidates is the prefix of the election's candidate keys: an
// etcd election (concurrency.NewElection on Leader) puts each candidate at
// Leader()+"/"+its lease id, and the oldest is the leader.
func (k Keyspace) LeaderCandidates() string { return under(k.id, "/leader/") }

// SnapshotPrefix is the prefix of every snapshot control key (writer,
// pointers, compaction floor, legacy import record).
func (k Keyspace) SnapshotPrefix() string { return BuildSnapshotKeyPrefix(k.id) }

// SnapshotWriter is the maintenance-lease owner key.
func (k Keyspace) SnapshotWriter() string { return BuildSnapshotWriterKey(k.id) }

// SnapshotLatest is the latest pointer.
func (k Keyspace) SnapshotLatest() string { return BuildSnapshotLatestKey(k.id) }

// SnapshotFallback is the fallback pointer.
func (k Keyspace) SnapshotFallback() string { return BuildSnapshotFallbackKey(k.id) }

// CompactionFloor is the compaction floor record.
func (k Keyspace) CompactionFloor() string { return BuildCompactionFloorKey(k.id) }

// LegacyImport is the record of an explicit legacy snapshot import, written
// once, in the same transaction that installs the imported snapshot as the
// latest pointer.
func (k Keyspace) LegacyImport() string { return BuildLegacyImportKey(k.id) }
