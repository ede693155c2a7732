package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/model"
)

// A deposed append is a batch that lands in etcd after another node was
// seen serving as the primary, holding entries that only the node it
// replaced took from clients: two primaries appended, whatever the
// master's fencing (a producer-view compare, or none). It is judged from
// what was left behind alone: the timeline's role changes (each "→
// primary" with etcd's revision once the harness saw it, an upper bound of
// when that node began to serve), etcd's history (every batch put, decoded
// through the contract) and the client history (which node each mutation
// was sent to). A master that claims no producer view is judged as one that
// does.

// serve is a node seen serving as the primary, from etcd revision rev on
// (an upper bound: the revision read once the harness saw it).
type serve struct {
	node string
	rev  int64
	at   int64 // when the harness saw it (ns since the run's start)
}

// servesOf are the role changes to primary whose revision is known, in
// revision order. A node seen as primary right after it was down with the
// same process, and primary before it went down ("primary → down → primary":
// a frozen primary resumed, still believing it leads), is the old primary's
// own belief, not a takeover. A change from standby, promoting, starting or
// a new process ("restarted →") counts, and so does "down → primary" when
// the node was not primary before it went silent (a promoting node slow to
// answer on a loaded machine, read "down" for a moment).
func servesOf(events []Event) []serve {
	var out []serve
	lastUp := map[string]string{} // node → the last role it was seen in but down
	for _, e := range events {
		if e.Kind != "role" {
			continue
		}
		node := strings.Trim(e.Target, "[]")
		from, to, _ := strings.Cut(e.Detail, " → ")
		wasPrimary := lastUp[node] == "primary"
		if to != "down" {
			lastUp[node] = to
		}
		if to != "primary" || e.EtcdRevision <= 0 {
			continue
		}
		if from == "down" && wasPrimary {
			continue // the same primary, seen again
		}
		out = append(out, serve{node: node, rev: e.EtcdRevision, at: e.At})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rev < out[j].rev })
	return out
}

// deposedAppend is one batch a deposed primary appended.
type deposedAppend struct {
	batch     uint64
	rev       int64
	node      string // the deposed primary whose entries it holds
	successor serve  // who served before it landed
	entries   int    // entries only node took
	acked     int    // of those, acknowledged
	first     int64  // the earliest of those ops' invocations
}

func (d deposedAppend) String() string {
	return fmt.Sprintf("[deposed-append] batch %d (rev %d) holds %d entries only %s took from clients (%d acknowledged, the first "+
		"invoked at %s), appended after %s was seen serving as the primary (rev %d, at %s): two primaries appended",
		d.batch, d.rev, d.entries, d.node, d.acked, seconds(d.first), d.successor.node, d.successor.rev, seconds(d.successor.at))
}

// deposedAppends finds every deposed append of the run.
func deposedAppends(in *Input) []deposedAppend {
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return nil
	}
	serves := servesOf(in.Events)
	if len(serves) < 2 {
		return nil // one primary all run long: nobody was deposed
	}
	// Which nodes took each key's mutations of each kind.
	type kop struct {
		k  [2]string
		op batchlog.OpType
	}
	took := map[kop][]*history.Op{}
	for i := range in.Ops {
		op := &in.Ops[i]
		if want, mutation := ackedOp(op); mutation && op.Node != "" {
			k := kop{ackKey(op), want}
			took[k] = append(took[k], op)
		}
	}
	injected := injectedRevisions(in.Events)
	var out []deposedAppend
	for _, e := range etcdByRevision(in) {
		id, ok := ks.ParseBatch(e.Key)
		if !ok || e.Type != "put" || injected[e.Revision] {
			continue
		}
		// the primary as of this revision: the last seen serving before it
		i := sort.Search(len(serves), func(i int) bool { return serves[i].rev >= e.Revision }) - 1
		if i < 0 {
			continue
		}
		current := serves[i]
		b, err := batchlog.DecodeBatch(e.Value)
		if err != nil {
			continue
		}
		d := deposedAppend{batch: id, rev: e.Revision, successor: current}
		foreign, own := map[string]bool{}, false
		for _, en := range b.Entries {
			if en.Op == batchlog.OpSegmentMount {
				// a segment's owner mounts it again at each new primary
				// (NEED_REMOUNT), in no client op: not attributable
				continue
			}
			ops := took[kop{entryKey(en), en.Op}]
			nodes := map[string]bool{}
			for _, op := range ops {
				nodes[op.Node] = true
			}
			if len(nodes) != 1 {
				continue // no op, or several nodes took it: not attributable
			}
			node := ops[0].Node
			if node == current.node {
				own = true
				continue
			}
			foreign[node] = true
			d.entries++
			for _, op := range ops {
				if op.Outcome == history.OK {
					d.acked++
				}
				if d.first == 0 || op.Invoke < d.first {
					d.first = op.Invoke
				}
			}
		}
		if own || len(foreign) != 1 {
			continue
		}
		for node := range foreign {
			d.node = node
		}
		// only a node that was itself a primary before is a deposed one;
		// and a node seen serving next, at or after this revision, may
		// have begun to serve (and append) before the harness read etcd:
		// its serve's revision is an upper bound, so its batch is its own
		if !slices.ContainsFunc(serves[:i], func(s serve) bool { return s.node == d.node }) ||
			(i+1 < len(serves) && serves[i+1].node == d.node) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// entryKey is the key a batch entry is ordered under, as ackKey names an
// acknowledgement's.
func entryKey(e batchlog.Entry) [2]string {
	if e.Op == batchlog.OpSegmentMount {
		m, err := metadata.DecodeSegmentMountOp(e.Payload)
		if err != nil {
			return [2]string{"segment", ""}
		}
		return [2]string{"segment", m.TransportEndpoint}
	}
	k := model.Key(e.Tenant, e.Key)
	return [2]string{k.Tenant, k.Key}
}
