package state

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// OpType is a batch entry's operation, numbered as in Mooncake's OpLog.
type OpType uint8

// Op types, upstream's OpType (oplog_types.h). 4 is LEASE_RENEW: the batch
// codec accepts it, upstream's OpLogApplier has no case for it and rejects
// the entry (oplog_applier.cpp:82-87), and so does Apply (not Known).
const (
	OpPutEnd         OpType = 1
	OpPutRevoke      OpType = 2
	OpRemove         OpType = 3
	OpLeaseRenew     OpType = 4
	OpSegmentMount   OpType = 5
	OpSegmentUnmount OpType = 6
	OpSegmentUpdate  OpType = 7
)

// Known reports whether t is one of the op types above.
func (t OpType) Known() bool {
	switch t {
	case OpPutEnd, OpPutRevoke, OpRemove, OpSegmentMount, OpSegmentUnmount, OpSegmentUpdate:
		return true
	}
	return false
}

func (t OpType) String() string {
	switch t {
	case OpPutEnd:
		return "PUT_END"
	case OpPutRevoke:
		return "PUT_REVOKE"
	case OpRemove:
		return "REMOVE"
	case OpLeaseRenew:
		return "LEASE_RENEW"
	case OpSegmentMount:
		return "SEGMENT_MOUNT"
	case OpSegmentUnmount:
		return "SEGMENT_UNMOUNT"
	case OpSegmentUpdate:
		return "SEGMENT_UPDATE"
	}
	return fmt.Sprintf("OP(%d)", uint8(t))
}

// Entry is one operation of a batch. For object ops Tenant and Key name the
// object ("" and "default" are the same tenant). For segment ops upstream
// writes Tenant "default" and Key the transport endpoint (the segment name
// on a remount); the payload alone says which segment. Payload is the op's
// struct_pack body (payload.go); PUT_REVOKE and REMOVE carry none.
type Entry struct {
	Op      OpType
	Tenant  string
	Key     string
	Payload []byte
}

// Batch is a complete batch: entries carry sequence ids FirstSeq..LastSeq.
type Batch struct {
	ID       uint64
	FirstSeq uint64
	LastSeq  uint64
	Entries  []Entry
}

// DefaultTenant is upstream's default tenant (tenant_id.h kDefaultValue):
// the tenant of segment entries, and the tenant "" stands for.
const DefaultTenant = "default"

// NormalizeTenant maps "" to DefaultTenant, as upstream's TenantId does
// (tenant_id.h:18-19) wherever its standby stores or looks up an object.
func NormalizeTenant(t string) string {
	if t == "" {
		return DefaultTenant
	}
	return t
}

// PutEnd builds the entry that makes an object visible; its payload is the
// MetadataPayload upstream's default build writes. An object with a replica
// of no known kind has no payload, which Stage refuses.
func PutEnd(tenant, key string, obj Object) Entry {
	b, err := metadata.EncodeMetadataPayload(objectPayload(&obj))
	if err != nil {
		b = nil
	}
	return Entry{Op: OpPutEnd, Tenant: tenant, Key: key, Payload: b}
}

// PutRevoke builds the entry that cancels a put (no-op when nothing was put).
func PutRevoke(tenant, key string) Entry { return Entry{Op: OpPutRevoke, Tenant: tenant, Key: key} }

// Remove builds the entry that removes an object.
func Remove(tenant, key string) Entry { return Entry{Op: OpRemove, Tenant: tenant, Key: key} }

// MountSegment builds the entry that registers a segment, as upstream's
// MasterService::MountSegment writes it: tenant "default", keyed by the
// transport endpoint.
func MountSegment(seg Segment) Entry {
	return Entry{Op: OpSegmentMount, Tenant: DefaultTenant, Key: seg.Endpoint, Payload: metadata.EncodeSegmentMountOp(segmentOp(&seg))}
}

// UnmountSegment builds the entry that unregisters a segment, as upstream's
// MasterService::UnmountSegment writes it.
func UnmountSegment(endpoint string) Entry {
	return Entry{Op: OpSegmentUnmount, Tenant: DefaultTenant, Key: endpoint,
		Payload: metadata.EncodeSegmentUnmountOp(metadata.SegmentUnmountOp{TransportEndpoint: endpoint})}
}

// UpdateSegment builds the entry that replaces a mounted segment's
// descriptor (no upstream writer emits it; upstream's applier reads it).
func UpdateSegment(seg Segment) Entry {
	return Entry{Op: OpSegmentUpdate, Tenant: DefaultTenant, Key: seg.Endpoint, Payload: metadata.EncodeSegmentUpdateOp(metadata.SegmentUpdateOp(segmentOp(&seg)))}
}

// Cursor is where the state stands after applying b.
func (b Batch) Cursor() Cursor { return Cursor{BatchID: b.ID, Seq: b.LastSeq} }
