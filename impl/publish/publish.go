package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/keyspace"
)

// Errors of a publication attempt. None of them is retried by overwriting:
// the candidate stays an orphan for GC.
var (
	ErrLeaseLost   = errors.New("maintenance lease lost before the pointer CAS")
	ErrCASConflict = errors.New("pointers changed since they were observed")
	ErrNotNewer    = errors.New("candidate is not newer than every valid pointer")
)

// Slot is one pointer slot as observed: its raw value (nil when absent) and,
// when that decodes, the pointer.
type Slot struct {
	Raw     []byte
	Pointer *Pointer
	Err     error // why Raw did not decode (nil when absent or valid)
}

// Present reports a slot with any value.
func (s Slot) Present() bool { return s.Raw != nil }

// Valid reports a slot whose value decodes.
func (s Slot) Valid() bool { return s.Pointer != nil }

// Observed is both slots read together at one revision.
type Observed struct {
	Latest, Fallback Slot
	Revision         int64
}

// Observe reads both pointer slots in one request.
func Observe(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) (Observed, error) {
	resp, err := kv.Txn(ctx).Then(clientv3.OpGet(ks.SnapshotLatest()), clientv3.OpGet(ks.SnapshotFallback())).Commit()
	if err != nil {
		return Observed{}, fmt.Errorf("read snapshot pointers: %w", err)
	}
	o := Observed{Revision: resp.Header.Revision}
	for i, slot := range []*Slot{&o.Latest, &o.Fallback} {
		kvs := resp.Responses[i].GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue
		}
		slot.Raw = bytes.Clone(kvs[0].Value)
		p, err := DecodePointer(slot.Raw)
		if err != nil {
			slot.Err = err
			continue
		}
		slot.Pointer = &p
	}
	return o, nil
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
// the raw observed value (or absence) of both slots.
func Publish(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, token string, o Observed, plan Plan) (Result, error) {
	cmps := []clientv3.Cmp{
		clientv3.Compare(clientv3.Value(ks.SnapshotWriter()), "=", token),
		rawCompare(ks.SnapshotLatest(), o.Latest),
		rawCompare(ks.SnapshotFallback(), o.Fallback),
	}
	ops := []clientv3.Op{clientv3.OpPut(ks.SnapshotLatest(), string(plan.Latest))}
	if plan.Fallback != nil {
		ops = append(ops, clientv3.OpPut(ks.SnapshotFallback(), string(plan.Fallback)))
	}
	resp, err := kv.Txn(ctx).If(cmps...).Then(ops...).Else(clientv3.OpGet(ks.SnapshotWriter())).Commit()
	if err != nil {
		return Result{}, fmt.Errorf("pointer CAS: %w", err)
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 || string(kvs[0].Value) != token {
			return Result{}, ErrLeaseLost
		}
		return Result{}, ErrCASConflict
	}
	return Result{Plan: plan, Revision: resp.Header.Revision}, nil
}

func rawCompare(key string, s Slot) clientv3.Cmp {
	if !s.Present() {
		return clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	}
	return clientv3.Compare(clientv3.Value(key), "=", string(s.Raw))
}
