// Package keyspace is the etcd key contract of DESIGN §2: every key a master
// writes, under the namespace /oplog/{cluster_id}. The harness's auditor reads
// the same keys, so this package is the single place that names them.
package keyspace

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// BatchIDWidth is the zero-padded width of a batch id in its key, so that
// lexicographic key order is numeric order.
const BatchIDWidth = 20

var clusterIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Keyspace names the keys of one cluster.
type Keyspace struct {
	root string // "/oplog/{cluster_id}"
}

// New returns the keyspace of clusterID, which must be 1–128 characters of
// [A-Za-z0-9._-] starting with a letter or digit (no slash, so namespaces
// never nest).
func New(clusterID string) (Keyspace, error) {
	if !clusterIDPattern.MatchString(clusterID) {
		return Keyspace{}, fmt.Errorf("cluster id %q: want 1-128 characters of [A-Za-z0-9._-], starting with a letter or digit", clusterID)
	}
	return Keyspace{root: "/oplog/" + clusterID}, nil
}

// Must is New for ids known to be valid (tests, constants).
func Must(clusterID string) Keyspace {
	ks, err := New(clusterID)
	if err != nil {
		panic(err)
	}
	return ks
}

// Root is the namespace prefix, "/oplog/{cluster_id}"; every key below starts with Root()+"/".
func (k Keyspace) Root() string { return k.root }

// BatchPrefix is the prefix of every batch key.
func (k Keyspace) BatchPrefix() string { return k.root + "/batches/" }

// Batch is the key of batch id.
func (k Keyspace) Batch(id uint64) string {
	return fmt.Sprintf("%s%0*d", k.BatchPrefix(), BatchIDWidth, id)
}

// ParseBatch returns the batch id of a batch key, or false when key is not one.
func (k Keyspace) ParseBatch(key string) (uint64, bool) {
	s, ok := strings.CutPrefix(key, k.BatchPrefix())
	if !ok || len(s) != BatchIDWidth {
		return 0, false
	}
	id, err := strconv.ParseUint(s, 10, 64)
	return id, err == nil
}

// DurablePrefix is the key of the durable prefix record.
func (k Keyspace) DurablePrefix() string { return k.root + "/durable_prefix" }

// ProducerView is the key of the producer view.
func (k Keyspace) ProducerView() string { return k.root + "/producer_view" }

// Leader is the election prefix.
func (k Keyspace) Leader() string { return k.root + "/leader" }

// SnapshotWriter is the maintenance-lease owner key.
func (k Keyspace) SnapshotWriter() string { return k.root + "/snapshot/writer" }

// SnapshotLatest is the latest pointer.
func (k Keyspace) SnapshotLatest() string { return k.root + "/snapshot/latest" }

// SnapshotFallback is the fallback pointer.
func (k Keyspace) SnapshotFallback() string { return k.root + "/snapshot/fallback" }

// CompactionFloor is the compaction floor record.
func (k Keyspace) CompactionFloor() string { return k.root + "/snapshot/compaction_floor" }

// LegacyImport is the record of an explicit legacy snapshot import, written
// once, in the same transaction that installs the imported snapshot as the
// latest pointer at batch 1 (impl/legacy).
func (k Keyspace) LegacyImport() string { return k.root + "/snapshot/legacy_import" }
