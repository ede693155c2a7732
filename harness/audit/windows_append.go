package audit

import (
	"slices"
	"strings"

	"github.com/oplogha/oplogha/harness/history"
)

// The crash windows at the append are only as strong as the batch they
// catch: a group-commit bug that mishandles a batch of several clients'
// entries passes every run whose crash lands on a one-entry batch. These
// figures say how big the caught batches were, from what was left behind.

// inDoubtBatches is commit-ends-badly's extent: of the durable batches
// holding entries whose clients got an unknown outcome (the batch the
// committer appended and never answered for), the most such entries in one
// batch, and the most clients they came from. An entry is matched to an op
// by tenant, key and op type, as durable-acknowledgement matches them.
func inDoubtBatches(in *Input) map[string]int {
	d, err := durableOf(in)
	if err != nil {
		return nil
	}
	where := newDurableLog(d).objectWrites() // the batches each write's durable entries are in
	acked := map[objectWrite]int{}
	var unknown []*history.Op
	for i := range in.Ops {
		op := &in.Ops[i]
		k, ok := objectWriteOf(op)
		if !ok {
			continue
		}
		switch op.Outcome {
		case history.OK:
			acked[k]++
		case history.Unknown:
			unknown = append(unknown, op)
		}
	}
	entries := map[uint64]int{}
	clients := map[uint64]map[int]bool{}
	for _, op := range unknown {
		k, _ := objectWriteOf(op)
		if len(where[k]) <= acked[k] {
			continue // every durable entry of it is an acknowledged op's
		}
		// The in-doubt entry is the latest of the write's (the acknowledged
		// ones came first or are the same key written again).
		b := where[k][len(where[k])-1]
		entries[b]++
		if clients[b] == nil {
			clients[b] = map[int]bool{}
		}
		clients[b][op.Client] = true
	}
	out := map[string]int{}
	for b, n := range entries {
		out["most in-doubt entries in one batch"] = max(out["most in-doubt entries in one batch"], n)
		out["most clients in one batch's in-doubt entries"] = max(out["most clients in one batch's in-doubt entries"], len(clients[b]))
	}
	return out
}

// heldAppend is one hold of a primary at primaryBeforeAppend that the
// harness ended: the mutations in flight at the node when the hit was
// seen (its built batch is among them, never appended).
type heldAppend struct {
	node    string
	at      int64
	inDoubt []*history.Op
}

// heldAppendsEnded are the hits of primaryBeforeAppend whose node a fault
// ended (a kill, a stop, a crash) before the hold's heal released it.
func heldAppendsEnded(in *Input) []heldAppend {
	var out []heldAppend
	for i, e := range in.Events {
		if e.Kind != "hit" || e.Name != "primaryBeforeAppend" {
			continue
		}
		node := strings.Trim(e.Target, "[]")
		ended := false
		for _, later := range in.Events[i+1:] {
			if later.Kind == "heal" && e.Detail != "" && later.Detail == e.Detail {
				break // released before anything ended it
			}
			if later.Kind == "fault" && slices.Contains(later.Ended, node) {
				ended = true
				break
			}
		}
		if !ended {
			continue
		}
		h := heldAppend{node: node, at: e.At}
		for j := range in.Ops {
			op := &in.Ops[j]
			if _, mutation := ackedOp(op); !mutation || op.Node != node {
				continue
			}
			if op.Invoke <= e.At && (op.Complete == 0 || op.Complete > e.At) {
				h.inDoubt = append(h.inDoubt, op)
			}
		}
		out = append(out, h)
	}
	return out
}

// countCrashBeforeAppend counts window crash-before-append: the mutations
// in flight at a primary held with its batch built and not yet appended,
// when the harness ended it there, by how each was answered.
func countCrashBeforeAppend(in *Input) map[string]int {
	out := map[string]int{}
	for _, h := range heldAppendsEnded(in) {
		for _, op := range h.inDoubt {
			out["in flight at the held primary when it ended: "+answer(op)]++
		}
	}
	return out
}

// crashBeforeAppendClients is its extent: the most clients with a mutation
// in flight at one held primary (each client has one request in flight, so
// the batch the primary held carried at most that many clients' entries,
// and the appendMinEntries gate says at least how many).
func crashBeforeAppendClients(in *Input) map[string]int {
	most := 0
	for _, h := range heldAppendsEnded(in) {
		clients := map[int]bool{}
		for _, op := range h.inDoubt {
			clients[op.Client] = true
		}
		most = max(most, len(clients))
	}
	if most == 0 {
		return nil
	}
	return map[string]int{"most clients in flight at one held primary": most}
}
