package audit

import (
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/oplogha/oplogha/harness/history"
)

// keyFate is what the history says of one key.
type keyFate struct {
	put, remove *history.Op // the (only) put and the (only) remove of the key
}

func fates(ops []history.Op) map[[2]string]*keyFate {
	out := map[[2]string]*keyFate{}
	for i := range ops {
		op := &ops[i]
		if op.Kind != history.Put && op.Kind != history.Remove {
			continue
		}
		k := [2]string{op.Tenant, op.Key}
		f := out[k]
		if f == nil {
			f = &keyFate{}
			out[k] = f
		}
		// A key may see several puts (a retry after an ambiguous outcome, or a
		// refused duplicate): the strongest outcome speaks for the key.
		if op.Kind == history.Put {
			f.put = stronger(f.put, op)
		} else {
			f.remove = stronger(f.remove, op)
		}
	}
	return out
}

// stronger keeps the op whose outcome says more: ok over unknown over failed.
func stronger(a, b *history.Op) *history.Op {
	rank := map[string]int{history.OK: 3, history.Unknown: 2, history.Failed: 1}
	if a == nil || rank[b.Outcome] > rank[a.Outcome] {
		return b
	}
	return a
}

// AcknowledgedData checks each running node's final state against the
// history: a key whose put was acknowledged and whose remove was not
// attempted (or definitely failed) must be present with the size put; a key
// whose remove was acknowledged must be absent; a present key must come from
// a put that was acknowledged or in doubt.
//
// Objects a legacy import brought (in.Base) count as puts acknowledged
// before the history began.
func AcknowledgedData(in *Input) Result {
	fs := fates(in.Ops)
	if in.Base != nil {
		for _, o := range in.Base.Objects {
			k := [2]string{o.Tenant, o.Key}
			if fs[k] == nil {
				fs[k] = &keyFate{}
			}
			if fs[k].put == nil || fs[k].put.Outcome != history.OK {
				fs[k].put = &history.Op{Kind: history.Put, Tenant: o.Tenant, Key: o.Key, Size: o.Size, Outcome: history.OK,
					Node: "legacy import of " + in.Base.LegacySnapshotID}
			}
		}
	}
	trail := newLogTrail(in)
	var ev evidence
	checked, required := 0, 0
	for _, f := range fs {
		if f.put != nil && f.put.Outcome == history.OK && (f.remove == nil || f.remove.Outcome == history.Failed) {
			required++
		}
	}
	for _, n := range in.Nodes {
		if !n.Running {
			continue
		}
		if n.State.Dump == nil && n.State.Objects > 0 {
			ev.add("%s: no state dump in the bundle", n.Name)
			continue
		}
		checked++
		present := map[[2]string]uint64{}
		for _, o := range n.State.Dump {
			present[[2]string{o.Tenant, o.Key}] = o.Object.Size
		}
		for k, f := range fs {
			size, has := present[k]
			mustHave := f.put != nil && f.put.Outcome == history.OK && (f.remove == nil || f.remove.Outcome == history.Failed)
			mustNot := f.remove != nil && f.remove.Outcome == history.OK
			switch {
			case mustHave && !has:
				ev.add("%s: %s/%s missing: put acknowledged at %s by %s%s; %s", n.Name, k[0], k[1], seconds(f.put.Complete), f.put.Node,
					namedPosition(f.put), trail.explain(k, f.put.BatchID))
			case mustHave && size != f.put.Size:
				ev.add("%s: %s/%s has size %d, the acknowledged put wrote %d", n.Name, k[0], k[1], size, f.put.Size)
			case mustNot && has:
				ev.add("%s: %s/%s present: remove acknowledged at %s by %s%s; %s", n.Name, k[0], k[1], seconds(f.remove.Complete),
					f.remove.Node, namedPosition(f.remove), trail.explain(k, f.remove.BatchID))
			}
		}
		for k := range present {
			f := fs[k]
			if f == nil || f.put == nil || f.put.Outcome == history.Failed {
				detail := "never put"
				if f != nil && f.put != nil {
					detail = fmt.Sprintf("its put failed at %s on %s with %s", seconds(f.put.Complete), f.put.Node, f.put.Code)
				}
				ev.add("%s: %s/%s present but no put of it was acknowledged or in doubt (invented: %s); %s", n.Name, k[0], k[1], detail, trail.explain(k, 0))
			}
		}
	}
	if checked == 0 {
		ev.add("no running node to check")
	}
	return Result{Pass: ev.empty(),
		Summary: fmt.Sprintf("%d keys with an acknowledged put that must survive, checked on %d nodes", required, checked), Evidence: ev.list(),
		Exercised: map[string]int{"acknowledged-present": required * checked}}
}

// logTrail indexes the OpLog as etcd's history saw it, so a finding can say
// where (or whether) a key's mutations were written.
type logTrail struct {
	byKey   map[[2]string][]string
	batches map[uint64][]string
}

func newLogTrail(in *Input) *logTrail {
	t := &logTrail{byKey: map[[2]string][]string{}, batches: map[uint64][]string{}}
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return t
	}
	for _, e := range in.Etcd {
		id, ok := ks.ParseBatch(e.Key)
		if !ok {
			continue
		}
		if e.Type == "delete" {
			t.batches[id] = append(t.batches[id], fmt.Sprintf("deleted at rev %d", e.Revision))
			continue
		}
		b, err := batchlog.DecodeBatch(e.Value)
		if err != nil {
			t.batches[id] = append(t.batches[id], fmt.Sprintf("undecodable at rev %d", e.Revision))
			continue
		}
		t.batches[id] = append(t.batches[id], fmt.Sprintf("written at rev %d with seq %d..%d", e.Revision, b.FirstSeq, b.LastSeq))
		for i, en := range b.Entries {
			k := [2]string{en.Tenant, en.Key}
			t.byKey[k] = append(t.byKey[k], fmt.Sprintf("%s in batch %d seq %d (rev %d)", en.Op, id, b.FirstSeq+uint64(i), e.Revision))
		}
	}
	return t
}

func (t *logTrail) explain(k [2]string, batch uint64) string {
	s := "the OpLog never held this key"
	if w := t.byKey[k]; len(w) > 0 {
		s = "the OpLog holds " + strings.Join(w, ", ")
	}
	if batch > 0 {
		if b := t.batches[batch]; len(b) > 0 {
			s += fmt.Sprintf("; batch %d was %s", batch, strings.Join(b, ", then "))
		} else {
			s += fmt.Sprintf("; batch %d was never written", batch)
		}
	}
	return s
}
