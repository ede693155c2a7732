// Package verify judges a live cluster namespace from what it stores: the
// keys under /oplog/{cluster_id}/ in etcd, read at one revision, and, when a
// snapshot store is named, the snapshots the pointers name. Records are
// decoded through impl/contract (upstream's batch record, durable prefix and
// producer view) and judged by upstream's startup rules
// (OpLogBatchStorage::ValidateDurablePrefixAtStartup and the batch writer's
// contiguity) and the RFC's invariants (floor, pointers, objects). It
// writes nothing and reports every violation with the key it concerns, so
// an operator can point at it. A namespace upstream's master wrote (no
// snapshot keys) is judged on its OpLog alone.
package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract"
)

// Violation is one broken rule, at the key it concerns.
type Violation struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// Pointer is what verification found of one snapshot pointer slot.
type Pointer struct {
	Slot       string `json:"slot"` // latest or fallback
	SnapshotID string `json:"snapshot_id"`
	BatchID    uint64 `json:"batch_id"`
	Seq        uint64 `json:"seq"`
	// Opened: the snapshot was read by exact keys and verified
	// (batchsnap.Open: the descriptor held to the pointer's size and CRC32C,
	// the manifest to the descriptor's, every object to the manifest's and
	// decoded, the identities agreeing); false when no store was named or it
	// did not verify.
	Opened bool `json:"opened"`
	// Error is why a snapshot that was to be opened was not: outside the
	// object root, or what the open refused (naming the object).
	Error string `json:"error,omitempty"`
}

// Report is the verdict on one namespace.
type Report struct {
	Root          string                 `json:"root"` // /oplog/{cluster_id}
	Revision      int64                  `json:"revision"`
	Keys          int64                  `json:"keys"`    // keys read under the root
	Batches       int64                  `json:"batches"` // batch keys
	FirstBatch    uint64                 `json:"first_batch,omitempty"`
	LastBatch     uint64                 `json:"last_batch,omitempty"`
	PrefixPresent bool                   `json:"prefix_present"`
	Prefix        batchlog.DurablePrefix `json:"prefix"`
	View          int64                  `json:"producer_view,omitempty"` // 0: absent or unreadable
	FloorPresent  bool                   `json:"floor_present"`
	Floor         uint64                 `json:"floor,omitempty"`
	Pointers      []Pointer              `json:"pointers,omitempty"`
	Store         string                 `json:"store,omitempty"` // "" when no store was named
	Unknown       []string               `json:"unknown,omitempty"`
	Violations    []Violation            `json:"violations"`
}

// OK reports whether nothing was violated.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

func (r *Report) violate(key, format string, args ...any) {
	r.Violations = append(r.Violations, Violation{Key: key, Reason: fmt.Sprintf(format, args...)})
}

// Store is what the verifier reads snapshots through: the contract's
// getter, and a name for the report.
type Store interface {
	contract.ObjectGetter
	Name() string
}

// Options bound and extend a verification.
type Options struct {
	// Store, when set, reaches the snapshot store: each pointer's snapshot
	// is opened by exact keys and checked against the pointer. It is the
	// contract's getter, so any client can serve (impl/objstore.Getter
	// adapts the implementation's stores; the harness has its own).
	Store Store
	// ObjectRoot, when set, is the cluster's snapshot root,
	// {s3_prefix}/{cluster_id}: a pointer must name a descriptor under it
	// (<root>/batch-oplog/<id>/descriptor.json).
	ObjectRoot string
	// PageSize is keys per etcd range request (default 500).
	PageSize int64
	// Progress, when set, is called after each page with the keys read so far.
	Progress func(keys int64)
}

// maxUnknown bounds the unknown keys a report lists (all are counted).
const maxUnknown = 20

// Namespace verifies the namespace ks names. The error is for a
// verification that could not run (etcd unreachable, the revision
// compacted away mid-scan); what it found is in the report.
func Namespace(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, opt Options) (*Report, error) {
	if opt.PageSize <= 0 {
		opt.PageSize = 500
	}
	h, err := readHead(ctx, kv, ks)
	if err != nil {
		return nil, err
	}
	rep := &Report{Root: ks.Root(), Revision: h.revision, Violations: []Violation{}}
	h.judge(rep, ks)
	s := newScan(rep, ks, h)
	if err := s.run(ctx, kv, opt); err != nil {
		return nil, err
	}
	s.finish()
	if err := judgePointers(ctx, rep, ks, h, s, opt); err != nil {
		return nil, err
	}
	return rep, nil
}

// legacyKey reports whether key is one of upstream's legacy per-entry
// OpLog keys, which its batch OpLog refuses to start beside
// (OpLogBatchStorage::RejectLegacyLayout): {root}/latest and
// {root}/<20 digits>.
func legacyKey(root, key string) bool {
	rest, ok := strings.CutPrefix(key, root+"/")
	if !ok {
		return false
	}
	if rest == "latest" {
		return true
	}
	return rest >= "00000000000000000000" && rest < ":"
}
