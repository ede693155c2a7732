package state

import (
	"fmt"
)

// apply applies one entry. Every check runs before the first write, so a
// rejected entry leaves t unchanged.
func (t *tables) apply(e Entry) error {
	if !e.Op.Known() {
		return fmt.Errorf("%w: %d", ErrUnknownOp, uint8(e.Op))
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
		if e.Tenant != "" {
			return fmt.Errorf("%w: segment op with a tenant of %d bytes", ErrMalformed, len(e.Tenant))
		}
	}
	switch e.Op {
	case OpPutEnd:
		return t.putEnd(e)
	case OpPutRevoke:
		if len(e.Payload) != 0 {
			return fmt.Errorf("%w: PUT_REVOKE carries a payload", ErrMalformed)
		}
		t.objects.Delete(objectItem{k: ObjectKey{e.Tenant, e.Key}})
		return nil
	case OpRemove:
		if len(e.Payload) != 0 {
			return fmt.Errorf("%w: REMOVE carries a payload", ErrMalformed)
		}
		if _, ok := t.objects.Delete(objectItem{k: ObjectKey{e.Tenant, e.Key}}); !ok {
			return ErrObjectNotFound
		}
		return nil
	case OpSegmentMount:
		seg, err := DecodeSegment(e.Key, e.Payload)
		if err != nil {
			return err
		}
		if _, ok := t.segments.Get(segmentItem{s: &seg}); ok {
			return ErrSegmentExists
		}
		t.segments.Set(segmentItem{s: &seg})
		return nil
	case OpSegmentUpdate:
		seg, err := DecodeSegment(e.Key, e.Payload)
		if err != nil {
			return err
		}
		old, ok := t.segments.Get(segmentItem{s: &seg})
		if !ok {
			return ErrSegmentNotFound
		}
		if old.s.Kind != seg.Kind {
			return fmt.Errorf("%w: update changes kind %s to %s", ErrSegmentMismatch, old.s.Kind, seg.Kind)
		}
		t.segments.Set(segmentItem{s: &seg})
		return nil
	case OpSegmentUnmount:
		if len(e.Payload) != 0 {
			return fmt.Errorf("%w: SEGMENT_UNMOUNT carries a payload", ErrMalformed)
		}
		return t.unmount(e.Key)
	}
	return fmt.Errorf("%w: %d", ErrUnknownOp, uint8(e.Op)) // unreachable: Known() above
}

func (t *tables) putEnd(e Entry) error {
	obj, err := DecodeObject(e.Payload)
	if err != nil {
		return err
	}
	item := objectItem{k: ObjectKey{e.Tenant, e.Key}, o: &obj}
	if _, ok := t.objects.Get(item); ok {
		return ErrObjectExists
	}
	for i, r := range obj.Replicas {
		seg, ok := t.segments.Get(segmentItem{s: &Segment{Endpoint: r.Segment}})
		if !ok {
			return fmt.Errorf("%w: replica %d on %q", ErrSegmentNotFound, i, r.Segment)
		}
		if seg.s.Kind != r.Kind {
			return fmt.Errorf("%w: replica %d is %s, segment %q is %s", ErrSegmentMismatch, i, r.Kind, r.Segment, seg.s.Kind)
		}
		if r.Offset+r.Length > seg.s.Capacity {
			return fmt.Errorf("%w: replica %d ends at %d past capacity %d of %q", ErrSegmentMismatch, i, r.Offset+r.Length, seg.s.Capacity, r.Segment)
		}
	}
	t.objects.Set(item)
	return nil
}

// unmount removes a segment and every replica on it; objects left without a
// replica are removed, as Mooncake does when a segment goes away.
func (t *tables) unmount(endpoint string) error {
	if _, ok := t.segments.Delete(segmentItem{s: &Segment{Endpoint: endpoint}}); !ok {
		return ErrSegmentNotFound
	}
	var changed []objectItem
	t.objects.Scan(func(it objectItem) bool {
		for _, r := range it.o.Replicas {
			if r.Segment == endpoint {
				changed = append(changed, it)
				break
			}
		}
		return true
	})
	for _, it := range changed {
		kept := make([]Replica, 0, len(it.o.Replicas))
		for _, r := range it.o.Replicas {
			if r.Segment != endpoint {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			t.objects.Delete(it)
			continue
		}
		o := *it.o
		o.Replicas = kept
		t.objects.Set(objectItem{k: it.k, o: &o})
	}
	return nil
}
