package audit

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/model"
	"github.com/oplogha/oplogha/impl/contract"
)

// RecoveredState judges each running node's final state (its /v1/state
// dump, as the runner collected it) against the model's state at that
// node's cursor, rebuilt from the durable history alone: object by object,
// segment by segment, and the node's digest against the model's digest of
// the contract. A node that exposes no state is "not exposed", never a
// pass. Nodes are never compared with each other.
//
// On the way it checks, after every durable batch, that no two live
// objects hold overlapping memory (replicas-disjoint).
func RecoveredState(in *Input) Result {
	var ev evidence
	n := map[string]int{}
	d, err := durableOf(in)
	if err != nil {
		return Result{Summary: "cannot read the durable history", Evidence: []string{err.Error()}}
	}
	want := map[contract.Cursor]bool{}
	for _, node := range in.Nodes {
		if node.Running {
			want[contract.Cursor(node.State.Cursor)] = true
		}
	}
	// The state at each node's cursor, from the last lineage that reached
	// it (or why the model cannot know it).
	states := map[contract.Cursor]*model.State{}
	unknown := map[contract.Cursor]error{}
	applied := 0
	var buffers *model.Buffers // the live objects' buffer replicas, following the walk
	d.Walk(modelStart(in), func(m model.Move, s *model.State, err error) bool {
		switch {
		case s == nil:
			buffers = nil
		case m.Kind == model.MoveAppend && buffers != nil:
			applied++
			n["replicas-disjoint"]++
			for _, o := range buffers.Update(s, touchedKeys(m.Batch)) {
				ev.add("[replicas-disjoint] rev %d, batch %d: %s", m.Revision, m.Cursor.BatchID, o)
			}
		default: // a start: the empty state, or an import's
			buffers = model.NewBuffers(s)
			for _, o := range buffers.Overlaps() {
				ev.add("[replicas-disjoint] rev %d, the state the history starts from at %s: %s", m.Revision, m.Cursor, o)
			}
		}
		if want[m.Cursor] {
			if s != nil {
				states[m.Cursor], unknown[m.Cursor] = s.Clone(), nil
			} else {
				states[m.Cursor], unknown[m.Cursor] = nil, err
			}
		}
		return true
	})
	checked, importBase := 0, false
	for _, node := range in.Nodes {
		if !node.Running {
			continue
		}
		cur := contract.Cursor(node.State.Cursor)
		if !exposesState(node) {
			ev.add("[recovered-equals-model] %s: state not exposed (no digest, no dump): the model cannot judge it", node.Name)
			continue
		}
		s := states[cur]
		if s == nil {
			why := unknown[cur]
			switch {
			case why == nil && len(d.Moves) == 0:
				ev.add("[recovered-equals-model] %s at %s: the etcd history holds no durable prefix", node.Name, cur)
			case why == nil:
				ev.add("[recovered-equals-model] %s at %s, which the durable prefix never reached", node.Name, cur)
			case errors.Is(why, model.ErrNoStart):
				importBase = true
			default:
				ev.add("[recovered-equals-model] %s at %s: %v", node.Name, cur, why)
			}
			continue
		}
		checked++
		n["recovered-equals-model"]++
		compareNode(&ev, node, s)
	}
	summary := fmt.Sprintf("%d running nodes judged against the model at their cursors; %d durable batches applied from the etcd history", checked, applied)
	if final, ok := d.Final(); ok {
		summary += fmt.Sprintf(", final durable prefix batch %d", final.Cursor.BatchID)
	}
	if importBase {
		summary += "; not judged: nodes whose history starts from a legacy import the bundle kept no snapshot of (the model has no start for it)"
	}
	if checked == 0 && ev.empty() && !importBase {
		ev.add("no running node to judge")
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list(), Exercised: n}
}

// exposesState reports whether a node showed any state at all: a master
// without GET /v1/state (upstream's exposes none) cannot be judged.
func exposesState(n Node) bool {
	return n.State.Digest != "" || n.State.Dump != nil || n.State.SegDump != nil
}

// touchedKeys are the object keys a batch stores or erases.
func touchedKeys(b *batchlog.Batch) []model.ObjectKey {
	var out []model.ObjectKey
	for _, e := range b.Entries {
		switch e.Op {
		case batchlog.OpPutEnd, batchlog.OpPutRevoke, batchlog.OpRemove:
			out = append(out, model.Key(e.Tenant, e.Key))
		}
	}
	return out
}

// compareNode compares one node's state with the model's at its cursor.
func compareNode(ev *evidence, node Node, s *model.State) {
	id := "[recovered-equals-model] " + node.Name
	if node.State.Digest != s.Digest() {
		ev.add("%s at %s: digest %s, the model's %s", id, s.Cursor(), node.State.Digest, s.Digest())
	}
	nObj, nSeg := s.Len()
	if node.State.Objects != nObj || node.State.Segments != nSeg {
		ev.add("%s at %s: %d objects and %d segments, the model %d and %d", id, s.Cursor(), node.State.Objects, node.State.Segments, nObj, nSeg)
	}
	if node.State.Dump == nil && nObj > 0 {
		ev.add("%s: no object dump in the bundle (digest only)", id)
	} else {
		got := map[model.ObjectKey]client.Object{}
		for _, o := range node.State.Dump {
			got[model.Key(o.Tenant, o.Key)] = o.Object
		}
		for _, k := range s.Keys() {
			o, _ := s.Object(k.Tenant, k.Key)
			g, ok := got[k]
			if !ok {
				ev.add("%s: %s missing; the durable history holds it (size %d)", id, k, o.Size)
				continue
			}
			if diff := objectDiff(contractObject(o), g); diff != "" {
				ev.add("%s: %s differs: %s", id, k, diff)
			}
			delete(got, k)
		}
		extra := slices.SortedFunc(maps.Keys(got), func(a, b model.ObjectKey) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range extra {
			ev.add("%s: %s present (size %d), which the durable history does not hold at %s", id, k, got[k].Size, s.Cursor())
		}
	}
	if node.State.SegDump == nil && nSeg > 0 {
		ev.add("%s: no segment dump in the bundle", id)
		return
	}
	gotSeg := map[string]client.Segment{}
	for _, sg := range node.State.SegDump {
		gotSeg[sg.Endpoint] = sg
	}
	for _, ep := range s.Endpoints() {
		sg, _ := s.Segment(ep)
		w := contractSegment(sg)
		g, ok := gotSeg[ep]
		switch {
		case !ok:
			ev.add("%s: segment %s missing; the durable history holds it", id, ep)
		case g != w:
			ev.add("%s: segment %s is %+v, the model's %+v", id, ep, g, w)
		}
		delete(gotSeg, ep)
	}
	for _, ep := range slices.Sorted(maps.Keys(gotSeg)) {
		ev.add("%s: segment %s present, which the durable history does not hold at %s", id, ep, s.Cursor())
	}
}
