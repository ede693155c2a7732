package audit

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/model"
	"github.com/oplogha/oplogha/impl/contract"
)

// DurableAcknowledgement checks every acknowledged mutation of the client
// history against the durable history alone (etcd's MVCC history, decoded
// through the contract): its entry is in a batch at or below the final
// durable prefix, of the lineage the final prefix belongs to, with the op,
// tenant, key (and for a put, the size) acknowledged (ack-durable); and
// acknowledgements of one key that did not overlap in time are in the
// OpLog in the order they were acknowledged (ack-order). A node's state is
// never read.
//
// An acknowledgement names its batch and sequence id; one that does not
// (a master that does not say) is matched to the first entry of its key
// and op no other acknowledgement took — first among the entries its own
// node appended (the node the timeline saw serving at the entry's
// revision), so that of two acknowledged puts of one key, one of them
// lost, the loss is put on the node that lost it.
func DurableAcknowledgement(in *Input) Result {
	var ev evidence
	n := map[string]int{}
	d, err := durableOf(in)
	if err != nil {
		return Result{Summary: "cannot read the durable history", Evidence: []string{err.Error()}}
	}
	log := newDurableLog(d)
	trail := newLogTrail(in)
	covered := snapshotCovers(in, log)
	claimed := map[uint64]*history.Op{} // seq → the acknowledgement that took it
	deposed := deposedAppends(in)
	log.appender = appenderOf(in.Events, deposed)
	own := log.claimOwn(in.Ops, claimed, covered)
	type placed struct {
		op  *history.Op
		seq uint64
	}
	byKey := map[[2]string][]placed{}
	writers := map[string][]writerAck{} // node → its acknowledgements in history order
	acked := 0
	var lost []*history.Op
	for i := range in.Ops {
		op := &in.Ops[i]
		want, mutation := ackedOp(op)
		if !mutation || op.Outcome != history.OK {
			continue
		}
		acked++
		n["ack-durable"]++
		if covered(op) {
			n["ack-durable: covered by the snapshot the history starts from"]++
			continue
		}
		k := ackKey(op)
		seq, why := own[op], ""
		if seq == 0 {
			seq, why = log.find(op, want, claimed)
		}
		writers[op.Node] = append(writers[op.Node], writerAck{op.Complete, why == ""})
		if why != "" {
			lost = append(lost, op)
			ev.add("[ack-durable] %s %s acknowledged at %s by %s%s: %s; %s", op.Kind, k[0]+"/"+k[1], seconds(op.Complete),
				op.Node, namedPosition(op), why, trail.explain([2]string{op.Tenant, op.Key}, op.BatchID))
			continue
		}
		if other := claimed[seq]; other != nil && other != op {
			ev.add("[ack-durable] %s %s acknowledged at %s by %s and %s %s at %s by %s both name seq %d", op.Kind, k[1], seconds(op.Complete), op.Node,
				other.Kind, other.Key, seconds(other.Complete), other.Node, seq)
			continue
		}
		claimed[seq] = op
		byKey[k] = append(byKey[k], placed{op, seq})
	}
	keys := make([][2]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"\x00"+keys[i][1] < keys[j][0]+"\x00"+keys[j][1] })
	for _, k := range keys {
		ps := byKey[k]
		for i := range ps {
			for j := range ps {
				a, b := ps[i], ps[j]
				if a.op.Complete >= b.op.Invoke {
					continue // b began before a was acknowledged: either order
				}
				n["ack-order"]++
				if a.seq > b.seq {
					ev.add("[ack-order] %s/%s: %s acknowledged at %s by %s is seq %d, after the %s invoked at %s (by %s) at seq %d", k[0], k[1],
						a.op.Kind, seconds(a.op.Complete), a.op.Node, a.seq, b.op.Kind, seconds(b.op.Invoke), b.op.Node, b.seq)
				}
			}
		}
	}
	refusalsNotDurable(in, log, &ev, n)
	// Findings that say what happened go before the lost writes they
	// explain, in the summary too: two primaries appended (a deposed
	// append), a writer that stopped for good.
	var first, headline []string
	n["deposed-append"] += len(servesOf(in.Events))
	for _, d := range deposed {
		first = append(first, d.String())
	}
	if len(deposed) > 0 {
		headline = append(headline, fmt.Sprintf("%d batches appended by a deposed primary after its successor served", len(deposed)))
	}
	stalls := writerStalls(writers, log, in.Events)
	n["writer-stalled"] += len(stalls)
	first = append(first, stalls...)
	headline = append(headline, stalls...)
	// A lost acknowledgement whose key and op another acknowledgement also
	// names, placed on the one durable entry, may be either of them:
	// without positions the history cannot tell which was lost.
	placedBy := map[[3]string]map[string]bool{}
	for k, ps := range byKey {
		for _, p := range ps {
			id := [3]string{k[0], k[1], p.op.Kind}
			if placedBy[id] == nil {
				placedBy[id] = map[string]bool{}
			}
			placedBy[id][p.op.Node] = true
		}
	}
	ambiguous := func(op *history.Op) bool {
		if op.BatchID != 0 {
			return false
		}
		k := ackKey(op)
		return len(placedBy[[3]string{k[0], k[1], op.Kind}]) > 0
	}
	first = append(first, lossFates(in.Events, lost, ambiguous)...)
	ev.prepend(first...)
	summary := fmt.Sprintf("%d acknowledged mutations, each found in the durable history", acked)
	if !ev.empty() {
		summary = fmt.Sprintf("%d acknowledged mutations checked against the durable history", acked)
	}
	for _, h := range headline {
		summary += "; " + h
	}
	if last, ok := log.last(); ok {
		summary += fmt.Sprintf(" (final durable prefix batch %d seq %d)", last.BatchID, last.Seq)
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list(), Exercised: n}
}

// refusalsNotDurable checks refusal-not-durable: per key and op (put,
// remove), the durable entries of the final lineage against the client
// ops that may have written them (acknowledged, or of unknown outcome).
// More entries than those means a definite failure was durable: each
// refused op of that key is named. It returns how many ops of unknown
// outcome were durable (entries beyond the acknowledged ones), the
// commit-ends-badly window's count.
func refusalsNotDurable(in *Input, log *durableLog, ev *evidence, n map[string]int) int {
	durable := map[objectWrite]int{}
	for k, batches := range log.objectWrites() {
		durable[k] = len(batches)
	}
	may := map[objectWrite]int{}
	acked := map[objectWrite]int{}
	unknown := map[objectWrite]int{}
	refused := map[objectWrite][]*history.Op{}
	var order []objectWrite
	for i := range in.Ops {
		op := &in.Ops[i]
		k, ok := objectWriteOf(op)
		if !ok {
			continue
		}
		switch op.Outcome {
		case history.OK:
			may[k]++
			acked[k]++
		case history.Failed:
			if len(refused[k]) == 0 {
				order = append(order, k)
			}
			refused[k] = append(refused[k], op)
		default:
			may[k]++
			unknown[k]++
		}
	}
	for _, k := range order {
		n["refusal-not-durable"]++
		if extra := durable[k] - may[k]; extra > 0 {
			for _, op := range refused[k] {
				ev.add("[refusal-not-durable] %s %s answered %q (not written) at %s by %s, yet the durable history holds %d %s "+
					"entries of it, %d more than the acknowledged and unknown ones", op.Kind, k.k[0]+"/"+k.k[1], op.Code,
					seconds(op.Complete), op.Node, durable[k], k.op, extra)
			}
		}
	}
	total := 0
	for k, u := range unknown {
		total += min(u, max(0, durable[k]-acked[k]))
	}
	return total
}

// objectWrite ties durable entries to the client ops that may have written
// them: an object (tenant normalised, as ackKey gives it) and the op type
// (PUT_END or REMOVE).
type objectWrite struct {
	k  [2]string
	op batchlog.OpType
}

// objectWriteOf is the objectWrite of a put or remove (false for reads and
// segment mounts).
func objectWriteOf(op *history.Op) (objectWrite, bool) {
	want, mutation := ackedOp(op)
	if !mutation || op.Kind == history.Mount {
		return objectWrite{}, false
	}
	return objectWrite{ackKey(op), want}, true
}

// objectWrites are the batches of the durable PUT_END and REMOVE entries of
// each objectWrite, in the log's sequence order.
func (l *durableLog) objectWrites() map[objectWrite][]uint64 {
	seqs := slices.Sorted(maps.Keys(l.entries))
	out := map[objectWrite][]uint64{}
	for _, seq := range seqs {
		de := l.entries[seq]
		if de.e.Op != batchlog.OpPutEnd && de.e.Op != batchlog.OpRemove {
			continue
		}
		k := model.Key(de.e.Tenant, de.e.Key)
		w := objectWrite{[2]string{k.Tenant, k.Key}, de.e.Op}
		out[w] = append(out[w], de.batch)
	}
	return out
}

// ackedOp is the op type an acknowledged mutation writes.
func ackedOp(op *history.Op) (batchlog.OpType, bool) {
	switch op.Kind {
	case history.Put:
		return batchlog.OpPutEnd, true
	case history.Remove:
		return batchlog.OpRemove, true
	case history.Mount:
		return batchlog.OpSegmentMount, true
	}
	return 0, false
}

// ackKey is the key an acknowledgement's entry is ordered under: the
// object (tenant normalised), or the segment's endpoint.
func ackKey(op *history.Op) [2]string {
	if op.Kind == history.Mount {
		return [2]string{"segment", op.Key}
	}
	k := model.Key(op.Tenant, op.Key)
	return [2]string{k.Tenant, k.Key}
}

// durableEntry is one entry of a durable batch.
type durableEntry struct {
	e     batchlog.Entry
	batch uint64
	rev   int64
}

// durableLog is the entries of the lineage the final durable prefix
// belongs to, by sequence id, up to the final prefix; broken says where
// the durable history stops being one (a prefix lost, a move the model
// cannot follow) when it does.
type durableLog struct {
	start   model.Move // the lineage's first move (init or import)
	entries map[uint64]durableEntry
	final   *contract.Cursor
	broken  string
	// appender is the node seen serving at a revision ("" unknown).
	appender func(rev int64) string
}

// appenderOf is the node the timeline saw serving as the primary at each
// revision: the last serve whose revision is at or below it. A serve's
// revision is read after the role change (an upper bound), so a new
// primary's first batches may be put on its predecessor: the preference
// it gives is a preference, never a verdict. A deposed append is its
// deposed primary's, though another node was serving when it landed: its
// entries are that node's acknowledgements, and the successor's later
// writes of the same keys must not claim them.
func appenderOf(events []Event, deposed []deposedAppend) func(rev int64) string {
	serves := servesOf(events)
	byDeposed := map[int64]string{}
	for _, d := range deposed {
		byDeposed[d.rev] = d.node
	}
	return func(rev int64) string {
		if node, ok := byDeposed[rev]; ok {
			return node // two primaries appended: this batch is the deposed one's
		}
		who := ""
		for _, s := range serves {
			if s.rev > rev {
				break
			}
			who = s.node
		}
		return who
	}
}

// claimOwn matches each acknowledgement that names no position to the
// first unclaimed entry of its key and op that its own node appended,
// before any is matched to another node's entry (find).
func (l *durableLog) claimOwn(ops []history.Op, claimed map[uint64]*history.Op, covered func(*history.Op) bool) map[*history.Op]uint64 {
	own := map[*history.Op]uint64{}
	if l.final == nil || l.appender == nil {
		return own
	}
	for i := range ops {
		op := &ops[i]
		want, mutation := ackedOp(op)
		if !mutation || op.Outcome != history.OK || op.BatchID != 0 || covered(op) {
			continue
		}
		for seq := l.start.Cursor.Seq + 1; seq <= l.final.Seq; seq++ {
			if de, ok := l.entries[seq]; ok && claimed[seq] == nil && matches(de.e, op, want) == "" && l.appender(de.rev) == op.Node {
				claimed[seq], own[op] = op, seq
				break
			}
		}
	}
	return own
}

func newDurableLog(d *model.Durable) *durableLog {
	l := &durableLog{entries: map[uint64]durableEntry{}}
	lineage := d.Lineage()
	if len(lineage) == 0 {
		l.broken = "the etcd history holds no durable prefix"
		if final, ok := d.Final(); ok && final.Kind == model.MoveLost {
			l.broken = fmt.Sprintf("the durable prefix was deleted at rev %d", final.Revision)
		}
		return l
	}
	l.start = lineage[0]
	for _, m := range lineage {
		switch m.Kind {
		case model.MoveAppend:
			for i, e := range m.Batch.Entries {
				l.entries[m.Batch.FirstSeq+uint64(i)] = durableEntry{e: e, batch: m.Batch.ID, rev: m.Revision}
			}
		case model.MoveLost:
			l.broken = fmt.Sprintf("the durable prefix was deleted at rev %d", m.Revision)
			l.final = nil
			continue
		case model.MoveOther:
			if l.broken == "" {
				l.broken = m.Why
			}
		}
		c := m.Cursor
		l.final = &c
	}
	return l
}

func (l *durableLog) last() (contract.Cursor, bool) {
	if l.final == nil {
		return contract.Cursor{}, false
	}
	return *l.final, true
}

// find is the sequence id of op's durable entry, or why there is none.
func (l *durableLog) find(op *history.Op, want batchlog.OpType, claimed map[uint64]*history.Op) (uint64, string) {
	if l.final == nil {
		return 0, "nothing is durable: " + l.broken
	}
	if op.BatchID == 0 {
		for seq := l.start.Cursor.Seq + 1; seq <= l.final.Seq; seq++ {
			if de, ok := l.entries[seq]; ok && claimed[seq] == nil && matches(de.e, op, want) == "" {
				return seq, ""
			}
		}
		return 0, fmt.Sprintf("no %s of it in the durable history", want)
	}
	if op.Seq > l.final.Seq || op.BatchID > l.final.BatchID {
		return 0, fmt.Sprintf("above the final durable prefix %s", *l.final)
	}
	de, ok := l.entries[op.Seq]
	if !ok {
		return 0, fmt.Sprintf("seq %d is not in the durable history's lineage (it starts at %s, %s)", op.Seq, l.start.Cursor, l.start.Kind)
	}
	if de.batch != op.BatchID {
		return 0, fmt.Sprintf("seq %d is in durable batch %d (rev %d)", op.Seq, de.batch, de.rev)
	}
	if why := matches(de.e, op, want); why != "" {
		return 0, fmt.Sprintf("durable batch %d (rev %d) holds %s at seq %d", de.batch, de.rev, why, op.Seq)
	}
	return op.Seq, ""
}

// matches says how entry e differs from what op acknowledged ("" when it
// is op's entry).
func matches(e batchlog.Entry, op *history.Op, want batchlog.OpType) string {
	desc := fmt.Sprintf("%s %s/%s", e.Op, model.Key(e.Tenant, e.Key).Tenant, e.Key)
	if e.Op != want {
		return desc
	}
	switch want {
	case batchlog.OpSegmentMount:
		m, err := metadata.DecodeSegmentMountOp(e.Payload)
		if err != nil || m.TransportEndpoint != op.Key {
			return fmt.Sprintf("%s mounting another endpoint", desc)
		}
		return ""
	}
	if model.Key(e.Tenant, e.Key) != model.Key(op.Tenant, op.Key) {
		return desc
	}
	if want == batchlog.OpPutEnd && op.Size != 0 {
		p, err := metadata.DecodeMetadataPayload(e.Payload)
		switch {
		case err != nil:
			return fmt.Sprintf("%s whose payload does not decode (%v)", desc, err)
		case p.Size != op.Size:
			return fmt.Sprintf("%s of size %d, acknowledged %d", desc, p.Size, op.Size)
		}
	}
	return ""
}

// snapshotCovers says whether an acknowledgement is covered by the
// snapshot the durable history starts from rather than by one of its
// batches. None is: the history of a run starts from an empty namespace
// or from a legacy import, which no client op precedes (the import's
// content is the model's start, judged against the fixture by
// snapshot-content, not an acknowledgement).
func snapshotCovers(*Input, *durableLog) func(op *history.Op) bool {
	return func(*history.Op) bool { return false }
}

// writerAck is one acknowledgement of a node: when, and whether its entry
// is in the durable history.
type writerAck struct {
	at      int64
	durable bool
}

// stallMinAcks acknowledgements in a row, to the end of the run, none of
// them durable, of a node whose process went on, make a writer that
// stopped while its node went on answering.
const stallMinAcks = 10

// endedAfter: the harness ended node's process (a kill, a stop, a restart)
// or it exited on its own at or after at.
func endedAfter(events []Event, node string, at int64) bool {
	for _, e := range events {
		if e.At >= at && (slices.Contains(e.Ended, node) || (e.Kind == "exit" && e.Target == node)) {
			return true
		}
	}
	return false
}

// writerStalls names each node whose acknowledgements, from some time to
// the end of the run, never became durable (at least stallMinAcks of them
// in a row): its writer stopped while it went on answering.
func writerStalls(writers map[string][]writerAck, log *durableLog, events []Event) []string {
	nodes := make([]string, 0, len(writers))
	for node := range writers {
		nodes = append(nodes, node)
	}
	sort.Strings(nodes)
	var lastRev int64
	var lastBatch uint64
	for _, de := range log.entries {
		if de.rev > lastRev {
			lastRev, lastBatch = de.rev, de.batch
		}
	}
	var out []string
	for _, node := range nodes {
		acks := writers[node]
		sort.SliceStable(acks, func(i, j int) bool { return acks[i].at < acks[j].at })
		from := len(acks)
		for from > 0 && !acks[from-1].durable {
			from--
		}
		tail := len(acks) - from
		if tail < stallMinAcks || endedAfter(events, node, acks[from].at) || cutThroughout(events, node, acks[from:]) {
			// lost with its process (a primary killed or crashed right
			// after answering), or each acknowledged while the node was cut
			// off from etcd: each is its own finding (its loss's fate), not
			// a writer that stopped while its node went on
			continue
		}
		line := fmt.Sprintf("[writer-stalled] %s: none of its acknowledgements from %s on became durable (%d of its %d, to the end of the run)",
			node, seconds(acks[from].at), tail, len(acks))
		if from > 0 {
			line += fmt.Sprintf("; its last durable one was acknowledged at %s", seconds(acks[from-1].at))
		}
		if lastRev > 0 {
			line += fmt.Sprintf("; the durable history's last entry is at rev %d (batch %d)", lastRev, lastBatch)
		}
		out = append(out, line)
	}
	return out
}

// cutThroughout says whether every one of acks was lost to a cut: it was
// acknowledged while a network fault on node's links, or a fault on an
// etcd member, was in force, or one came next (lossFates' classes).
func cutThroughout(events []Event, node string, acks []writerAck) bool {
	for _, a := range acks {
		if _, class, _ := nextOnNode(events, node, a.at); class != LossCut && class != LossEtcd {
			return false
		}
	}
	return len(acks) > 0
}

// namedPosition is " (batch B seq S)", the position an acknowledgement
// named, or "" for one that named none (a master that does not say).
func namedPosition(op *history.Op) string {
	if op.BatchID == 0 && op.Seq == 0 {
		return ""
	}
	return fmt.Sprintf(" (batch %d seq %d)", op.BatchID, op.Seq)
}
