package model

import (
	"fmt"
	"strconv"

	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/oplogha/oplogha/impl/contract"
)

// Apply applies one batch record to s with the rules of upstream's
// OpLogApplier (kvcache-ai/Mooncake @ 3b5a594, mooncake-store/src/ha/oplog/
// oplog_applier.cpp unless named otherwise), entry by entry in sequence
// order:
//
//   - The batch must continue the cursor: batch id one above it, first
//     sequence id one above its sequence, one sequence id per entry. The
//     standby reader refuses a batch that does not
//     (oplog_batch_standby_reader.cpp:101-113), the applier an entry whose
//     sequence id is not the one it expects (:48-60).
//   - An entry whose key is over 4096 bytes or whose payload is over
//     10 MiB is refused (:28-33; ValidateOpLogEntrySize,
//     oplog_types.cpp:35-50). batchlog.DecodeBatch refuses such records
//     already; a batch built by hand can hold one.
//   - PUT_END stores an object under (tenant, key), replacing any object
//     there (:159-164; PutMetadata assigns, standby_metadata_store.cpp:9).
//     The object is the payload's ToStandbyMetadata
//     (metadata_store.h:110-119: an absent group id, data type or
//     hard_pinned reads as "", 0, false). An empty payload (:128-141) or
//     one that does not decode as a MetadataPayload (:143-156) stores a
//     default-constructed StandbyObjectMetadata: no replicas, size 0, and
//     hard_pinned unset (Pin).
//   - PUT_REVOKE and REMOVE erase the object; a missing one is no error
//     (:173-199 log a warning; the entry counts as applied).
//   - SEGMENT_MOUNT and SEGMENT_UPDATE register the payload's segment
//     under its transport endpoint, replacing one there (:213-229,
//     :243-259; OnSegmentMount and OnSegmentUpdate assign,
//     metadata_store.cpp:5-8, :16-19). SEGMENT_UNMOUNT erases the
//     endpoint the payload names, a missing one is no error (:231-241;
//     metadata_store.cpp:10-14). The entry's tenant and key do not
//     matter; objects keep their replicas. A segment payload that does
//     not decode changes nothing (:215-220, :233-238, :245-250).
//   - Tenant "" and "default" are one tenant: the store normalises every
//     tenant (standby_metadata_store.cpp:9, :42; metadata_store.h:16-18;
//     tenant_id.h:18-19).
//   - Any other op, LEASE_RENEW (4) included, is refused (:82-87 return
//     false, and the standby reader stops its catch-up there,
//     oplog_batch_standby_reader.cpp:127-131).
//
// Upstream would keep the entries before a refused one and stop; the model
// does not guess at what a node then holds: a refused entry makes Apply
// return a *RejectedError (an ErrRejected) and leave s unchanged, and
// whoever replays a history claims no state from there on. Upstream's
// per-entry checksum (:35-43) covers the payload the batch record carries,
// which batchlog.DecodeBatch has verified with the record's checksum.
func (s *State) Apply(b batchlog.Batch) error {
	if n := uint64(len(b.Entries)); n == 0 || b.FirstSeq == 0 || b.LastSeq < b.FirstSeq || b.LastSeq-b.FirstSeq+1 != n {
		return fmt.Errorf("%w: batch %d holds seq %d..%d and %d entries", ErrDiscontinuous, b.ID, b.FirstSeq, b.LastSeq, len(b.Entries))
	}
	if b.ID != s.cursor.BatchID+1 || b.FirstSeq != s.cursor.Seq+1 {
		return fmt.Errorf("%w: state at %s, batch %d starts at seq %d", ErrDiscontinuous, s.cursor, b.ID, b.FirstSeq)
	}
	changes := make([]func(), 0, len(b.Entries))
	for i, e := range b.Entries {
		ch, reason := s.prepare(e)
		if reason != "" {
			return &RejectedError{BatchID: b.ID, Index: i, Seq: b.FirstSeq + uint64(i), Op: e.Op, Reason: reason}
		}
		changes = append(changes, ch)
	}
	for _, ch := range changes {
		ch()
	}
	s.cursor = contract.Cursor{BatchID: b.ID, Seq: b.LastSeq}
	return nil
}

// prepare decides one entry's change without making it, or says why
// upstream's applier refuses the entry.
func (s *State) prepare(e batchlog.Entry) (change func(), refused string) {
	switch {
	case len(e.Key) > batchlog.MaxObjectKeySize:
		return nil, "object_key too large: size=" + strconv.Itoa(len(e.Key))
	case len(e.Payload) > batchlog.MaxPayloadSize:
		return nil, "payload too large: size=" + strconv.Itoa(len(e.Payload))
	}
	k := Key(e.Tenant, e.Key)
	switch e.Op {
	case batchlog.OpPutEnd:
		o, err := putEndObject(e.Payload)
		if err != nil {
			return nil, err.Error()
		}
		return func() { s.objects[k] = o }, ""
	case batchlog.OpPutRevoke, batchlog.OpRemove:
		return func() { delete(s.objects, k) }, ""
	case batchlog.OpSegmentMount:
		op, err := metadata.DecodeSegmentMountOp(e.Payload)
		if err != nil {
			return func() {}, ""
		}
		seg := segmentFromOp(op)
		return func() { s.segments[seg.Endpoint] = seg }, ""
	case batchlog.OpSegmentUpdate:
		op, err := metadata.DecodeSegmentUpdateOp(e.Payload)
		if err != nil {
			return func() {}, ""
		}
		seg := segmentFromOp(metadata.SegmentMountOp(op))
		return func() { s.segments[seg.Endpoint] = seg }, ""
	case batchlog.OpSegmentUnmount:
		op, err := metadata.DecodeSegmentUnmountOp(e.Payload)
		if err != nil {
			return func() {}, ""
		}
		return func() { delete(s.segments, op.TransportEndpoint) }, ""
	}
	return nil, fmt.Sprintf("unsupported op_type=%d", uint8(e.Op))
}

// putEndObject is the object ApplyPutEnd stores for payload.
func putEndObject(payload []byte) (Object, error) {
	if len(payload) == 0 {
		return Object{}, nil // a default StandbyObjectMetadata: hard_pinned unset
	}
	p, err := metadata.DecodeMetadataPayload(payload)
	if err != nil {
		return Object{}, nil // deserialize_to failed: the same empty metadata
	}
	o, err := objectFromPayload(p)
	if err != nil {
		return Object{}, fmt.Errorf("PUT_END payload: %w", err)
	}
	return o, nil
}
