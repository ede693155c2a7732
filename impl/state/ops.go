package state

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// OpType is a batch entry's operation, numbered as in Mooncake's OpLog.
type OpType uint8

// Op types. 4 is unused in Mooncake's numbering and is rejected.
const (
	OpPutEnd         OpType = 1
	OpPutRevoke      OpType = 2
	OpRemove         OpType = 3
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
// object; for segment ops Tenant is empty and Key is the transport endpoint.
// Payload is the op's JSON body (PUT_END: Object; SEGMENT_MOUNT/UPDATE: Segment;
// otherwise empty).
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

// PutEnd builds the entry that makes an object visible.
func PutEnd(tenant, key string, obj Object) Entry {
	return Entry{Op: OpPutEnd, Tenant: tenant, Key: key, Payload: mustJSON(obj)}
}

// PutRevoke builds the entry that cancels a put (no-op when nothing was put).
func PutRevoke(tenant, key string) Entry { return Entry{Op: OpPutRevoke, Tenant: tenant, Key: key} }

// Remove builds the entry that removes an object.
func Remove(tenant, key string) Entry { return Entry{Op: OpRemove, Tenant: tenant, Key: key} }

// MountSegment builds the entry that registers a segment.
func MountSegment(seg Segment) Entry {
	return Entry{Op: OpSegmentMount, Key: seg.Endpoint, Payload: mustJSON(seg)}
}

// UnmountSegment builds the entry that unregisters a segment; replicas on it go with it.
func UnmountSegment(endpoint string) Entry { return Entry{Op: OpSegmentUnmount, Key: endpoint} }

// UpdateSegment builds the entry that replaces a mounted segment's descriptor.
func UpdateSegment(seg Segment) Entry {
	return Entry{Op: OpSegmentUpdate, Key: seg.Endpoint, Payload: mustJSON(seg)}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("state: marshal %T: %v", v, err)) // plain structs cannot fail
	}
	return b
}

// decodeStrict decodes exactly one JSON value with no unknown fields.
func decodeStrict(payload []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: payload: trailing data", ErrMalformed)
	}
	return nil
}

// DecodeObject decodes and validates a PUT_END payload.
func DecodeObject(payload []byte) (Object, error) {
	var o Object
	if err := decodeStrict(payload, &o); err != nil {
		return Object{}, err
	}
	if err := o.validate(); err != nil {
		return Object{}, err
	}
	return o, nil
}

// DecodeSegment decodes and validates a SEGMENT_MOUNT/UPDATE payload for endpoint.
func DecodeSegment(endpoint string, payload []byte) (Segment, error) {
	var s Segment
	if err := decodeStrict(payload, &s); err != nil {
		return Segment{}, err
	}
	if s.Endpoint != endpoint {
		return Segment{}, fmt.Errorf("%w: segment endpoint %q differs from entry key %q", ErrMalformed, s.Endpoint, endpoint)
	}
	if err := s.validate(); err != nil {
		return Segment{}, err
	}
	return s, nil
}

// Cursor is where the state stands after applying b.
func (b Batch) Cursor() Cursor { return Cursor{BatchID: b.ID, Seq: b.LastSeq} }
