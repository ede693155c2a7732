// Package keyspace names the etcd keys of one cluster, under the namespace
// /oplog/{cluster_id}. The keys and the cluster id rule are impl/contract's
// (upstream's for the OpLog keys, the RFC's for the others); this package
// is the name the master's packages use for them.
package keyspace

import "github.com/oplogha/oplogha/impl/contract"

// BatchIDWidth is the zero-padded width of a batch id in its key, so that
// lexicographic key order is numeric order.
const BatchIDWidth = contract.BatchIDWidth

// Keyspace names the keys of one cluster (contract.Keyspace).
type Keyspace = contract.Keyspace

// New returns the keyspace of clusterID, which must pass upstream's cluster
// id rule (contract.NormalizeClusterID): 1-128 bytes of [0-9A-Za-z_.-]
// once trailing slashes are dropped.
func New(clusterID string) (Keyspace, error) { return contract.NewKeyspace(clusterID) }

// Must is New for ids known to be valid (tests, constants).
func Must(clusterID string) Keyspace { return contract.MustKeyspace(clusterID) }
