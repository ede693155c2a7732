package publish

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/oplog"
)

// Errors of a publication attempt. None of them is retried by overwriting:
// the candidate stays an orphan for GC.
var (
	ErrLeaseLost   = errors.New("maintenance lease lost")
	ErrCASConflict = errors.New("pointers or floor changed since they were observed")
	ErrNotNewer    = errors.New("candidate is not newer than every valid pointer")
	// ErrBelowFloor: the candidate's cursor is below the compaction floor,
	// so batches it needs for a suffix replay may already be gone.
	ErrBelowFloor = errors.New("candidate is below the compaction floor")
)

// Slot is one pointer slot as observed: its raw value (nil when absent) and,
// when that decodes, the pointer.
type Slot struct {
	Raw     []byte
	Pointer *Pointer
	Err     error // why Raw did not decode (nil when absent or valid)
}

// Present reports a slot with any value, an empty one included: etcd
// returns no value bytes for a key that exists with an empty value, and
// such a key is still there — a reader that called it absent would compare
// its creation revision with zero and never match it, so latest could
// never be repaired.
func (s Slot) Present() bool { return s.Raw != nil }

// Valid reports a slot whose value decodes.
func (s Slot) Valid() bool { return s.Pointer != nil }

// Observed is both slots, the compaction floor and the producer view, read
// together at one revision: what a publication compares and what a
// retention cycle validates.
type Observed struct {
	Latest, Fallback Slot
	// FloorRaw is the floor record as read (nil: no floor), Floor its batch.
	FloorRaw []byte
	Floor    uint64
	// View is the producer view (0: none yet).
	View     uint64
	Revision int64
}

// Observe reads both pointer slots, the floor and the producer view in one
// request. A floor or view that does not decode is an error: nothing may be
// published or pruned against a record that cannot be read.
func Observe(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) (Observed, error) {
	resp, err := kv.Txn(ctx).Then(clientv3.OpGet(ks.SnapshotLatest()), clientv3.OpGet(ks.SnapshotFallback()),
		clientv3.OpGet(ks.CompactionFloor()), clientv3.OpGet(ks.ProducerView())).Commit()
	if err != nil {
		return Observed{}, fmt.Errorf("read snapshot pointers: %w", err)
	}
	o := Observed{Revision: resp.Header.Revision}
	if kvs := resp.Responses[2].GetResponseRange().Kvs; len(kvs) > 0 {
		f, err := oplog.DecodeFloor(kvs[0].Value)
		if err != nil {
			return Observed{}, &oplog.RecordError{Key: ks.CompactionFloor(), Err: err}
		}
		o.FloorRaw, o.Floor = present(kvs[0].Value), f.BatchID
	}
	if kvs := resp.Responses[3].GetResponseRange().Kvs; len(kvs) > 0 {
		v, err := oplog.DecodeProducerView(kvs[0].Value)
		if err != nil {
			return Observed{}, &oplog.RecordError{Key: ks.ProducerView(), Err: err}
		}
		o.View = v
	}
	o.Latest, o.Fallback = slotOf(resp.Responses[0].GetResponseRange().Kvs), slotOf(resp.Responses[1].GetResponseRange().Kvs)
	return o, nil
}

// slotOf decodes a pointer slot from its range response (empty: absent).
func slotOf(kvs []*mvccpb.KeyValue) Slot {
	if len(kvs) == 0 {
		return Slot{}
	}
	s := Slot{Raw: present(kvs[0].Value)}
	p, err := DecodePointer(s.Raw)
	if err != nil {
		s.Err = err
		return s
	}
	s.Pointer = &p
	return s
}

// present copies a present key's value, never nil (an empty value is a
// non-nil empty slice).
func present(v []byte) []byte { return append([]byte{}, v...) }

// ObserveSlots reads only the two pointer slots, in one request: what
// recovery needs. A snapshot plus its OpLog suffix proves itself (the suffix
// is read contiguously up to the durable prefix), so an unreadable floor,
// which would stop publication and pruning, does not stop recovery.
func ObserveSlots(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) (latest, fallback Slot, err error) {
	resp, err := kv.Txn(ctx).Then(clientv3.OpGet(ks.SnapshotLatest()), clientv3.OpGet(ks.SnapshotFallback())).Commit()
	if err != nil {
		return Slot{}, Slot{}, fmt.Errorf("read snapshot pointers: %w", err)
	}
	return slotOf(resp.Responses[0].GetResponseRange().Kvs), slotOf(resp.Responses[1].GetResponseRange().Kvs), nil
}

// Plan is what a publication will write.
type Plan struct {
	Latest   []byte // the candidate
	Fallback []byte // nil: leave the fallback slot as observed
	Kind     string // first | rotate | repair
}

// PlanFor applies the rotation rules to an observation:
//   - the candidate must be strictly newer than every valid pointer;
//   - latest valid: fallback = old latest, latest = candidate (rotate);
//   - nothing there: latest = candidate, fallback stays absent (first);
//   - latest malformed or missing: latest = candidate, fallback is left as it
//     is — a valid fallback is preserved, a malformed one is never copied
//     into a slot (repair).
func PlanFor(o Observed, candidate Pointer) (Plan, error) {
	enc, err := candidate.Encode()
	if err != nil {
		return Plan{}, err
	}
	if candidate.LastIncludedBatchID < o.Floor {
		return Plan{}, fmt.Errorf("%w: candidate at batch %d, floor %d", ErrBelowFloor, candidate.LastIncludedBatchID, o.Floor)
	}
	for name, s := range map[string]Slot{"latest": o.Latest, "fallback": o.Fallback} {
		if s.Valid() && !newer(candidate, *s.Pointer) {
			return Plan{}, fmt.Errorf("%w: candidate batch %d seq %d, %s %s at batch %d seq %d", ErrNotNewer,
				candidate.LastIncludedBatchID, candidate.LastIncludedSeq, name, s.Pointer.SnapshotID, s.Pointer.LastIncludedBatchID, s.Pointer.LastIncludedSeq)
		}
	}
	switch {
	case o.Latest.Valid():
		return Plan{Latest: enc, Fallback: o.Latest.Raw, Kind: "rotate"}, nil
	case !o.Latest.Present() && !o.Fallback.Present():
		return Plan{Latest: enc, Kind: "first"}, nil
	default:
		return Plan{Latest: enc, Kind: "repair"}, nil
	}
}

func newer(a, b Pointer) bool {
	return a.LastIncludedBatchID > b.LastIncludedBatchID && a.LastIncludedSeq > b.LastIncludedSeq
}

// Result is a committed publication.
type Result struct {
	Plan     Plan
	Revision int64
}

// Publish commits a plan in one transaction comparing the writer token and
// the raw observed value (or absence) of both slots and of the floor, so a
// floor that moved past the plan's check fails the CAS too.
func Publish(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, token string, o Observed, plan Plan) (Result, error) {
	cmps := []clientv3.Cmp{
		clientv3.Compare(clientv3.Value(ks.SnapshotMaintenance()), "=", token),
		CompareRaw(ks.SnapshotLatest(), o.Latest.Raw),
		CompareRaw(ks.SnapshotFallback(), o.Fallback.Raw),
		CompareRaw(ks.CompactionFloor(), o.FloorRaw),
	}
	ops := []clientv3.Op{clientv3.OpPut(ks.SnapshotLatest(), string(plan.Latest))}
	if plan.Fallback != nil {
		ops = append(ops, clientv3.OpPut(ks.SnapshotFallback(), string(plan.Fallback)))
	}
	resp, err := kv.Txn(ctx).If(cmps...).Then(ops...).Else(clientv3.OpGet(ks.SnapshotMaintenance())).Commit()
	if err != nil {
		return Result{}, fmt.Errorf("pointer CAS: %w", err)
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 || string(kvs[0].Value) != token {
			return Result{}, fmt.Errorf("%w before the pointer CAS", ErrLeaseLost)
		}
		return Result{}, ErrCASConflict
	}
	return Result{Plan: plan, Revision: resp.Header.Revision}, nil
}

// CompareRaw is the transaction compare that holds key to the raw value
// read (nil: the key was absent), an empty value included.
func CompareRaw(key string, raw []byte) clientv3.Cmp {
	if raw == nil {
		return clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	}
	return clientv3.Compare(clientv3.Value(key), "=", string(raw))
}
