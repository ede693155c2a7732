package state

import (
	"fmt"

	"github.com/tidwall/btree"
)

// Apply semantics are upstream's OpLogApplier's (kvcache-ai/Mooncake
// @3b5a594, mooncake-store/src/ha/oplog/oplog_applier.cpp, with the stores
// it calls: ha/standby_metadata_store.cpp, metadata_store.cpp), so that a
// standby fed a batch upstream wrote builds what upstream's standby builds:
//
//   - PUT_END stores the payload's object under (tenant, key), replacing an
//     existing one (applier :159-164, PutMetadata assigns:
//     standby_metadata_store.cpp:9). An empty payload, or one that does not
//     decode, stores an empty object (applier :128-141 and :143-156).
//     Replicas are not checked against the segment registry.
//   - PUT_REVOKE and REMOVE delete the object; a missing one is no error
//     (applier :173-199 log a warning and the entry counts as applied).
//   - Op 4 (LEASE_RENEW), and any op but 1, 2, 3, 5, 6, 7, is rejected
//     (applier :82-87 returns false; the batch standby reader stops there,
//     oplog_batch_standby_reader.cpp:127-131). Here the whole batch is
//     rejected and nothing of it applies (this project applies a batch
//     atomically; upstream keeps the entries before the rejected one).
//   - Object tenants "" and "default" are one tenant: upstream's store
//     normalises every tenant through TenantId (standby_metadata_store.cpp:9,
//     tenant_id.h:18-19); objects are stored under "default".
//   - Segment ops ignore the entry's tenant and key: the payload's transport
//     endpoint names the segment (applier :213-259). Upstream writes them
//     under tenant "default" (master_service.cpp:13165-13169), a mount keyed
//     by the endpoint (:917-919), a remount by the segment name
//     (:1270-1272), an unmount by the endpoint (:2670); so a remount lands
//     on the endpoint like a mount, and a segment entry with tenant "" is
//     the same entry.
//   - A key over 4096 bytes rejects the entry (applier :28-33,
//     oplog_types.cpp:35-50).
//   - SEGMENT_MOUNT and SEGMENT_UPDATE both upsert by endpoint
//     (metadata_store.cpp:5-8, :16-19); SEGMENT_UNMOUNT erases by endpoint,
//     a missing one is no error (:10-14), and objects keep their replicas
//     (the registry knows nothing of objects). A segment payload that does
//     not decode changes nothing (applier :215-220, :233-238, :245-250).
//
// A primary stages its clients' entries with Tx.Stage, which first admits
// the entry (admit): the checks this project's master makes before it
// writes, as upstream's MasterService checks before it writes an OpLog
// entry. An admitted entry then changes the state exactly as Apply would,
// so a primary and its standbys agree.
//
// Deliberate differences, each an input no upstream writer produces: a
// tenant over MaxKeyBytes (upstream bounds only the key), or a decodable
// PUT_END whose object this model cannot hold (a replica status outside
// 0..5, a string over MaxKeyBytes, the snapshot codec's bound), rejects the
// batch instead of storing it.

// apply applies one entry with upstream's applier semantics. Every check
// runs before the first write, so a rejected entry leaves t unchanged.
func (t *tables) apply(e Entry) error {
	c, err := prepare(e, &payloadDecoder{})
	if err != nil {
		return err
	}
	t.change(&c, nil)
	return nil
}

// change is one entry's effect on the tables, decided (and every check of
// the entry made) before anything is written: a batch prepares all its
// entries first, so that one rejected entry leaves the state unchanged.
type change struct {
	op  OpType
	obj objectItem // PUT_END: the object to store; PUT_REVOKE, REMOVE: the key to delete
	seg *Segment   // SEGMENT_MOUNT, SEGMENT_UPDATE: the segment; SEGMENT_UNMOUNT: its endpoint; nil: nothing changes
}

// prepare checks e as upstream's applier does and decodes its payload
// with d, writing nothing.
func prepare(e Entry, d *payloadDecoder) (change, error) {
	if !e.Op.Known() {
		return change{}, fmt.Errorf("%w: %d (%s)", ErrUnknownOp, uint8(e.Op), e.Op)
	}
	if len(e.Tenant) > MaxKeyBytes || len(e.Key) > MaxKeyBytes {
		return change{}, fmt.Errorf("%w: tenant or key longer than %d bytes", ErrMalformed, MaxKeyBytes)
	}
	c := change{op: e.Op}
	switch e.Op {
	case OpPutEnd:
		obj, err := d.replayObject(e.Payload)
		if err != nil {
			return change{}, err
		}
		c.obj = objectItem{k: ObjectKey{NormalizeTenant(e.Tenant), e.Key}, o: obj}
	case OpPutRevoke, OpRemove:
		c.obj = objectItem{k: ObjectKey{NormalizeTenant(e.Tenant), e.Key}}
	case OpSegmentMount, OpSegmentUpdate:
		if seg, err := DecodeSegment(e.Op, e.Payload); err == nil {
			c.seg = &seg
		}
	case OpSegmentUnmount:
		if ep, err := DecodeUnmount(e.Payload); err == nil {
			c.seg = &Segment{Endpoint: ep}
		}
	}
	return c, nil
}

// change makes a prepared change; it cannot fail. hint (may be nil) is the
// object tree's path hint: replayed keys cluster, so it saves most of the
// search.
func (t *tables) change(c *change, hint *btree.PathHint) {
	switch c.op {
	case OpPutEnd:
		if prev, replaced := t.objects.SetHint(c.obj, hint); replaced {
			t.fp.addObject(prev.k, prev.o, -1)
		}
		t.fp.addObject(c.obj.k, c.obj.o, +1)
	case OpPutRevoke, OpRemove:
		if prev, deleted := t.objects.DeleteHint(c.obj, hint); deleted {
			t.fp.addObject(prev.k, prev.o, -1)
		}
	case OpSegmentMount, OpSegmentUpdate:
		if c.seg != nil {
			if prev, replaced := t.segments.Set(segmentItem{s: c.seg}); replaced {
				t.fp.addSegment(prev.s, -1)
			}
			t.fp.addSegment(c.seg, +1)
		}
	case OpSegmentUnmount:
		if c.seg != nil {
			if prev, deleted := t.segments.Delete(segmentItem{s: c.seg}); deleted {
				t.fp.addSegment(prev.s, -1)
			}
		}
	}
}

// replayObject is the object upstream's applier stores for a PUT_END
// payload: empty, hard_pinned unset, when the payload is empty or does not
// decode.
func (d *payloadDecoder) replayObject(payload []byte) (*Object, error) {
	if len(payload) == 0 {
		return &Object{HardPinnedUnset: true}, nil
	}
	obj, decodeErr, err := d.object(payload)
	if decodeErr != nil {
		return &Object{HardPinnedUnset: true}, nil // upstream: struct_pack fails, empty metadata
	}
	return obj, err // err: decodes, but this model cannot hold it
}

// admit checks an entry a primary is about to write: the preconditions
// this project's master enforces for its clients. It changes nothing.
func (t *tables) admit(e Entry) error {
	if !e.Op.Known() {
		return fmt.Errorf("%w: %d (%s)", ErrUnknownOp, uint8(e.Op), e.Op)
	}
	if len(e.Tenant) > MaxKeyBytes || len(e.Key) > MaxKeyBytes {
		return fmt.Errorf("%w: tenant or key longer than %d bytes", ErrMalformed, MaxKeyBytes)
	}
	switch e.Op {
	case OpPutEnd, OpPutRevoke, OpRemove:
		if e.Key == "" {
			return fmt.Errorf("%w: empty object key", ErrMalformed)
		}
	default:
		if e.Tenant != "" && e.Tenant != DefaultTenant {
			return fmt.Errorf("%w: segment op with a tenant other than %q", ErrMalformed, DefaultTenant)
		}
	}
	k := objectItem{k: ObjectKey{NormalizeTenant(e.Tenant), e.Key}}
	switch e.Op {
	case OpPutEnd:
		return t.admitPut(k, e.Payload)
	case OpPutRevoke:
		if len(e.Payload) != 0 {
			return fmt.Errorf("%w: PUT_REVOKE carries a payload", ErrMalformed)
		}
	case OpRemove:
		if len(e.Payload) != 0 {
			return fmt.Errorf("%w: REMOVE carries a payload", ErrMalformed)
		}
		if _, ok := t.objects.Get(k); !ok {
			return ErrObjectNotFound
		}
	case OpSegmentMount, OpSegmentUpdate:
		seg, err := DecodeSegment(e.Op, e.Payload)
		if err != nil {
			return err
		}
		if err := seg.admit(); err != nil {
			return err
		}
		if e.Key != seg.Endpoint {
			return fmt.Errorf("%w: segment endpoint %q differs from entry key %q", ErrMalformed, seg.Endpoint, e.Key)
		}
		old, ok := t.segments.Get(segmentItem{s: &seg})
		switch {
		case e.Op == OpSegmentMount && ok:
			return ErrSegmentExists
		case e.Op == OpSegmentUpdate && !ok:
			return ErrSegmentNotFound
		case e.Op == OpSegmentUpdate && old.s.Kind != seg.Kind:
			return fmt.Errorf("%w: update changes kind %s to %s", ErrSegmentMismatch, old.s.Kind, seg.Kind)
		}
	case OpSegmentUnmount:
		ep, err := DecodeUnmount(e.Payload)
		if err != nil {
			return err
		}
		if ep != e.Key {
			return fmt.Errorf("%w: unmount endpoint %q differs from entry key %q", ErrMalformed, ep, e.Key)
		}
		if _, ok := t.segments.Get(segmentItem{s: &Segment{Endpoint: ep}}); !ok {
			return ErrSegmentNotFound
		}
	}
	return nil
}

func (t *tables) admitPut(k objectItem, payload []byte) error {
	obj, err := DecodeObject(payload)
	if err != nil {
		return err
	}
	if err := obj.admit(); err != nil {
		return err
	}
	if _, ok := t.objects.Get(k); ok {
		return ErrObjectExists
	}
	return t.checkPlacement(&obj)
}

// checkPlacement checks that every buffer replica of o lies within a
// registered segment of its kind. Only writers of this project hold their
// objects to it (a primary's put, a legacy import): upstream's applier does
// not link objects to segments.
func (t *tables) checkPlacement(o *Object) error {
	for i, r := range o.Replicas {
		if !r.Kind.buffered() {
			continue
		}
		seg, ok := t.segments.Get(segmentItem{s: &Segment{Endpoint: r.Segment}})
		if !ok {
			return fmt.Errorf("%w: replica %d on %q", ErrSegmentNotFound, i, r.Segment)
		}
		if want := segmentKindOf(r.Kind); seg.s.Kind != want {
			return fmt.Errorf("%w: replica %d is %s, segment %q is %s", ErrSegmentMismatch, i, r.Kind, r.Segment, seg.s.Kind)
		}
		if r.Offset+r.Length > seg.s.Capacity || r.Offset+r.Length < r.Offset {
			return fmt.Errorf("%w: replica %d ends past capacity %d of %q", ErrSegmentMismatch, i, seg.s.Capacity, r.Segment)
		}
	}
	return nil
}

// segmentKindOf is the segment kind a buffer replica must sit on: memory
// on a memory segment, NVMe-oF on a non-memory one.
func segmentKindOf(k ReplicaKind) ReplicaKind {
	if k == ReplicaMemory {
		return ReplicaMemory
	}
	return ReplicaDisk
}
