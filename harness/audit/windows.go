package audit

import (
	"slices"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/history"

	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// A Window is a state the system must be driven into for a class of bug to
// show at all: a bug that lives there passes every run that never gets
// there, however green. A scenario names the windows it is meant to reach
// (expect.windows); minimum-work fails a run that reached none of a named
// window's events, and every run counts each window it reached
// (Exercised["window <id>"], with finer counts as "window <id>: <what>"),
// so `chaos list --coverage --bundles` shows which runs reached which
// window and how often. The counts come from what the run left behind —
// etcd's MVCC history decoded through the contract and the runner's own
// timeline — never from a master's account of itself.
type Window struct {
	ID  string
	Doc string
	// Count returns how often the run was in the window, by what was
	// damaged or how it was reached (the keys sum to the total); nil when
	// no scenario can reach the window yet.
	Count func(in *Input) map[string]int
	// Extent, when set, gives figures beside the count that are not summed
	// into it, each the most of something one visit had (long-replay: the
	// most reader pages one replay of each form read, at least), as
	// Exercised keys "window <id>, <what>".
	Extent func(in *Input) map[string]int
}

// Windows are the windows the suite knows, in the order docs/windows.md
// gives them.
var Windows = []Window{
	{ID: "stale-publisher", Doc: "a standby whose applied cursor is below the current latest pointer's batch holds the maintenance lease " +
		"and reaches its publication or its no-advance decision", Count: countStalePublisher},
	{ID: "long-replay", Doc: "a bootstrap, a rebootstrap and a promotion's catch-up each read the OpLog across at least 3 of the reader's pages",
		Count: countLongReplay, Extent: longReplayPagesRead},
	{ID: "zombie-primary", Doc: "a primary paused past its lease resumes and reaches its append before its successor's first append",
		Count: countZombiePrimary},
	{ID: "damaged-view", Doc: "masters start with the durable prefix present and the producer view absent, malformed, or ahead of every " +
		"view a batch was appended under", Count: countDamagedView},
	{ID: "commit-ends-badly", Doc: "the group committer crashes or loses etcd after an append is durable, before its waiters are answered: " +
		"a mutation whose outcome the client got as unknown is durable", Count: countCommitEndsBadly, Extent: inDoubtBatches},
	{ID: "crash-before-append", Doc: "a primary ends with a batch of several clients' entries built and its append not yet sent: " +
		"none of them may have been acknowledged", Count: countCrashBeforeAppend, Extent: crashBeforeAppendClients},
	{ID: "deposed-reads", Doc: "clients read from a primary cut off from etcd after its successor acknowledged a newer write",
		Count: countDeposedReads},
	{ID: "foreign-batch-at-id", Doc: "an append's outcome is unknown and another primary's batch sits at its id when the old primary reads it back",
		Count: countForeignBatchAtID},
	{ID: "latest-unreadable-pruned", Doc: "masters start while etcd holds a latest pointer value nobody can read (garbage, cut, empty), " +
		"a readable fallback, and an OpLog pruned below the compaction floor (batch 1 gone)", Count: countLatestUnreadablePruned},
}

// WindowByID finds a window.
func WindowByID(id string) (Window, bool) {
	for _, w := range Windows {
		if w.ID == id {
			return w, true
		}
	}
	return Window{}, false
}

// windowCounts counts every window the run reached, as Exercised keys.
func windowCounts(in *Input) map[string]int {
	out := map[string]int{}
	for _, w := range Windows {
		if w.Count == nil {
			continue
		}
		total := 0
		for what, n := range w.Count(in) {
			total += n
			out["window "+w.ID+": "+what] += n
		}
		if total > 0 {
			out["window "+w.ID] = total
		}
		if w.Extent != nil {
			for what, n := range w.Extent(in) {
				out["window "+w.ID+", "+what] = n
			}
		}
	}
	return out
}

// starts are the moments masters started again after the harness ended
// them (a crash, a stop, a restart), with etcd's revision then and how many
// masters it ended: what a bootstrap read is the namespace at that revision
// (nothing of the namespace moves while every master is down, and a single
// restarted master reads it within its first moment). A master a fault
// took down until its heal (kill, stop) starts at the heal: its revision
// then is the start's.
type start struct {
	rev   int64
	nodes int
}

func startsOf(events []Event) []start {
	var out []start
	for i, e := range events {
		if len(e.Ended) == 0 || e.EtcdRevision <= 0 {
			continue
		}
		rev := e.EtcdRevision
		if e.Kind == "fault" && e.Detail != "" {
			for _, later := range events[i+1:] {
				if later.Kind == "heal" && later.Detail == e.Detail {
					// A restart's own heal carries no revision: its masters
					// started at once, with the namespace as they left it.
					rev = max(rev, later.EtcdRevision)
					break
				}
			}
		}
		out = append(out, start{rev, len(e.Ended)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rev < out[j].rev })
	return out
}

// etcdByRevision is a copy of the run's etcd history in revision order
// (events of one revision keep their order).
func etcdByRevision(in *Input) []etcddump.Event {
	evs := append([]etcddump.Event(nil), in.Etcd...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Revision < evs[j].Revision })
	return evs
}

// keysAt replays etcd's history and calls at for each start with the
// namespace as it stood at that start's revision.
func keysAt(in *Input, at func(s start, ns *namespaceAt)) {
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return
	}
	starts := startsOf(in.Events)
	ns := &namespaceAt{ks: ks, values: map[string][]byte{}, batches: map[uint64]bool{}, batchView: map[uint64]int64{},
		injected: injectedRevisions(in.Events)}
	evs := etcdByRevision(in)
	i := 0
	for _, s := range starts {
		for ; i < len(evs) && evs[i].Revision <= s.rev; i++ {
			ns.apply(evs[i])
		}
		at(s, ns)
	}
}

// namespaceAt is the namespace's control keys and batch ids at one revision.
type namespaceAt struct {
	ks        keyspace.Keyspace
	values    map[string][]byte // present control keys (a present empty value is a non-nil empty slice)
	batches   map[uint64]bool
	batchView map[uint64]int64 // the producer view when each batch was put (0: none readable)
	injected  map[int64]bool   // revisions the harness wrote
	// viewByHarness: the producer view's current value is one the harness
	// wrote, not one a primary claimed.
	viewByHarness bool
}

func (ns *namespaceAt) apply(e etcddump.Event) {
	if id, ok := batchlog.ParseBatchRecordKey(ns.ks.ClusterID(), e.Key); ok {
		if e.Type == "delete" {
			delete(ns.batches, id)
			return
		}
		ns.batches[id] = true
		if _, seen := ns.batchView[id]; !seen {
			ns.batchView[id] = ns.view()
		}
		return
	}
	if e.Key == ns.ks.ProducerView() {
		ns.viewByHarness = ns.injected[e.Revision]
	}
	if e.Type == "delete" {
		delete(ns.values, e.Key)
		return
	}
	ns.values[e.Key] = append([]byte{}, e.Value...)
}

// view is the producer view's value when it decodes, else 0.
func (ns *namespaceAt) view() int64 {
	v, err := batchlog.DecodeProducerView(ns.values[ns.ks.ProducerView()])
	if err != nil {
		return 0
	}
	return v
}

// prefixPresent: a durable prefix record is there (whatever it says).
func (ns *namespaceAt) prefixPresent() bool {
	_, ok := ns.values[ns.ks.DurablePrefix()]
	return ok
}

func (ns *namespaceAt) lowestBatch() uint64 {
	var low uint64
	for id := range ns.batches {
		if low == 0 || id < low {
			low = id
		}
	}
	return low
}

// countLatestUnreadablePruned counts master starts into window 8: latest
// present but not a pointer the contract decodes, fallback decoding, and
// batch 1 gone from a pruned OpLog (so only fallback plus the suffix can
// recover, neither the OpLog from batch 1 nor failing closed).
func countLatestUnreadablePruned(in *Input) map[string]int {
	out := map[string]int{}
	keysAt(in, func(s start, ns *namespaceAt) {
		raw, present := ns.values[ns.ks.SnapshotLatest()]
		if !present {
			return
		}
		if _, err := batchsnap.DecodePointer(raw); err == nil {
			return
		}
		fb, ok := ns.values[ns.ks.SnapshotFallback()]
		if !ok {
			return
		}
		if _, err := batchsnap.DecodePointer(fb); err != nil {
			return
		}
		if low := ns.lowestBatch(); low <= 1 {
			return
		}
		what := "latest malformed"
		if len(raw) == 0 {
			what = "latest empty"
		}
		out[what] += s.nodes
	})
	return out
}

// countStalePublisher counts window 1: the maintenance lease taken by a
// node whose applier was held — the runner's timeline has the hit of
// standbyBeforeApply on it, with etcd's revision once the hit was seen and
// the fault that armed it, until that fault's heal or the node's end —
// while the latest pointer named a batch
// above the durable prefix at the hit, so above any cursor the node can
// have had. By whether a pointer was written while the node held the
// lease: it must not have been (a publisher below latest has nothing
// newer to publish).
func countStalePublisher(in *Input) map[string]int {
	out := map[string]int{}
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return out
	}
	holds := applierHolds(in)
	if len(holds) == 0 {
		return out
	}
	evs := etcdByRevision(in)
	var prefix, latest uint64
	staleToken, published := "", false // a lease taken below latest, until released
	done := func() {
		if staleToken == "" {
			return
		}
		if published {
			out["lease taken below latest, a pointer written under it"]++
		} else {
			out["lease taken below latest, nothing published"]++
		}
		staleToken, published = "", false
	}
	for _, e := range evs {
		bindHolds(holds, e.Revision, prefix)
		switch {
		case e.Key == ks.DurablePrefix() && e.Type == "put":
			if p, err := batchlog.DecodeDurablePrefix(e.Value); err == nil {
				prefix = p.BatchID
			}
		case e.Key == ks.SnapshotLatest() && e.Type == "put":
			if p, err := batchsnap.DecodePointer(e.Value); err == nil {
				latest = p.LastIncludedBatchID
			}
			published = published || staleToken != ""
		case e.Key == ks.SnapshotMaintenance():
			if e.Type == "put" && string(e.Value) == staleToken {
				continue // the holder renewing its own value
			}
			done()
			if e.Type != "put" {
				continue
			}
			node, _, _ := strings.Cut(string(e.Value), "/")
			for _, h := range holds {
				if h.node == node && h.bounded && e.Revision > h.from && e.Revision <= h.to && latest > h.bound {
					staleToken = string(e.Value)
				}
			}
		}
	}
	done()
	return out
}

// The failpoints whose hits windows are counted by: standbyBeforeApply
// holds a standby's applier (its hit bounds the node's cursor:
// countStalePublisher); primaryAppendUnknown holds a primary whose append
// went unanswered (countForeignBatchAtID).
const (
	standbyBeforeApply   = "standbyBeforeApply"
	primaryAppendUnknown = "primaryAppendUnknown"
)

// countDeposedReads counts window 6 from the client history: reads a node
// answered as the primary it took itself for (served, or refused by its
// read barrier) after another node acknowledged a mutation later than the
// node's own last acknowledgement before the read — a successor had
// acknowledged a newer write, so the node was deposed — by whether the read
// was served or how it was refused. A read no node answered (a transport
// error: the node was down or cut off from its clients), or one refused by
// a node that knew it was not the primary (not_primary, not_serving), did
// not reach a deposed primary and does not count. A node deposed and
// elected again counts its reads until its first new acknowledgement.
func countDeposedReads(in *Input) map[string]int {
	out := map[string]int{}
	var all []int64                // every acknowledgement's completion, in order
	byNode := map[string][]int64{} // each node's
	for i := range in.Ops {
		op := &in.Ops[i]
		if _, mutation := ackedOp(op); mutation && op.Outcome == history.OK {
			all = append(all, op.Complete)
			byNode[op.Node] = append(byNode[op.Node], op.Complete)
		}
	}
	slices.Sort(all)
	for _, at := range byNode {
		slices.Sort(at)
	}
	before := func(at []int64, t int64) int { return sort.Search(len(at), func(i int) bool { return at[i] >= t }) } // how many < t
	for i := range in.Ops {
		g := &in.Ops[i]
		if g.Kind != history.Get || (g.Outcome != history.OK && !refusedAsPrimary(g.Code)) {
			continue
		}
		own := byNode[g.Node]
		n := before(own, g.Invoke)
		if n == 0 {
			continue // the node acknowledged nothing before: it was never seen primary
		}
		// Another node acknowledged after the node's last acknowledgement
		// before the read (a tie is no succession).
		if before(all, g.Invoke)-before(all, own[n-1]+1) == 0 {
			continue
		}
		how := "served"
		if g.Outcome != history.OK {
			how = "refused " + g.Code
		}
		if ownMemberBehind(in, g.Node, g.Invoke) {
			how = "its etcd member behind the quorum, " + how
		}
		out[how]++
	}
	return out
}

// ownMemberBehind: when the read was sent, node reached only etcd members
// the quorum's messages did not reach — its links to every other member
// cut (link-down or blackhole faults in effect) and every member it still
// reached partitioned from the rest (an etcd-partition cutting the
// messages to it from every other member) — window 6's second form: a
// primary whose own member has fallen behind the quorum, which answers
// what only it still holds.
func ownMemberBehind(in *Input, node string, at int64) bool {
	members := map[string]bool{}
	cutLinks := map[string]bool{}           // members node's links to are cut
	inbound := map[string]map[string]bool{} // member → the members whose messages to it are cut
	for _, f := range faultsInEffect(in.Events, at) {
		targets := f.Anchor.Targets
		switch f.Name {
		case "link-down", "blackhole":
			for _, l := range targets {
				if n, m, ok := strings.Cut(l, "."); ok && n == node && strings.HasPrefix(m, "etcd-") {
					cutLinks[m] = true
				}
			}
		case "etcd-partition":
			for _, c := range targets {
				from, to, ok := strings.Cut(c, "→")
				if !ok {
					continue
				}
				members[from], members[to] = true, true
				if inbound[to] == nil {
					inbound[to] = map[string]bool{}
				}
				inbound[to][from] = true
			}
		}
	}
	if len(members) == 0 {
		return false
	}
	for m := range cutLinks {
		members[m] = true
	}
	reached := 0
	for m := range members {
		if cutLinks[m] {
			continue
		}
		reached++
		if len(inbound[m]) < len(members)-1 {
			return false // a member node reaches still hears from another
		}
	}
	return reached > 0
}

// faultsInEffect are the fault events (with their anchors) injected at or
// before at and not healed by then.
func faultsInEffect(events []Event, at int64) []Event {
	var out []Event
	for i, e := range events {
		if e.Kind != "fault" || !e.OK || e.Anchor == nil || e.At > at {
			continue
		}
		healed := false
		for _, h := range events[i+1:] {
			if h.Kind == "heal" && h.Detail == e.Detail && h.At <= at {
				healed = true
				break
			}
		}
		if !healed {
			out = append(out, e)
		}
	}
	return out
}

// refusedAsPrimary: a read refused with code was refused by a node that
// still took itself for the primary (a read barrier that could not confirm
// its view, say), not by one that knew it was not (not_primary,
// not_serving) or that no node answered (get_failed, or no code).
func refusedAsPrimary(code string) bool {
	switch code {
	case "", "get_failed", "not_primary", "not_serving":
		return false
	}
	return true
}

// countForeignBatchAtID counts window 7 from the client history and the
// timeline: the mutations that were in flight at a node when the runner
// saw the node's append unanswered (a hit of primaryAppendUnknown: the
// client history cannot tell an append that went unanswered from one etcd
// refused), while another node acknowledged from the batch id the node
// would have appended next (one past the highest it had acknowledged from
// when the mutation was sent), and that were answered only after that —
// another primary's batch sat at the id the node was resolving — by
// outcome (ok is what must never be: the audits of durable acknowledgement
// judge it).
func countForeignBatchAtID(in *Input) map[string]int {
	out := map[string]int{}
	type ack struct {
		node    string
		batch   uint64
		at      int64
		highest uint64 // the node's highest batch up to this acknowledgement
	}
	byNode := map[string][]ack{}
	foreign := map[uint64][]ack{} // batch id → its acknowledgements
	for i := range in.Ops {
		op := &in.Ops[i]
		if _, mutation := ackedOp(op); mutation && op.Outcome == history.OK && op.BatchID > 0 {
			a := ack{node: op.Node, batch: op.BatchID, at: op.Complete}
			byNode[op.Node] = append(byNode[op.Node], a)
			foreign[op.BatchID] = append(foreign[op.BatchID], a)
		}
	}
	for _, acks := range byNode {
		sort.Slice(acks, func(i, j int) bool { return acks[i].at < acks[j].at })
		var hi uint64
		for i := range acks {
			hi = max(hi, acks[i].batch)
			acks[i].highest = hi
		}
	}
	unanswered := map[string][]int64{} // node → when its appends were seen unanswered
	for _, e := range in.Events {
		if e.Kind == "hit" && e.Name == primaryAppendUnknown {
			node := strings.Trim(e.Target, "[]")
			unanswered[node] = append(unanswered[node], e.At)
		}
	}
	for i := range in.Ops {
		m := &in.Ops[i]
		if _, mutation := ackedOp(m); !mutation {
			continue
		}
		if !slices.ContainsFunc(unanswered[m.Node], func(at int64) bool { return m.Invoke < at && at < m.Complete }) {
			continue
		}
		own := byNode[m.Node]
		n := sort.Search(len(own), func(i int) bool { return own[i].at >= m.Invoke })
		if n == 0 {
			continue // the node had acknowledged nothing when m was sent
		}
		next := own[n-1].highest + 1 // the batch id the node would append next
		overtaken := false
		for _, a := range foreign[next] {
			overtaken = overtaken || (a.node != m.Node && a.at > m.Invoke && a.at < m.Complete)
		}
		if !overtaken {
			continue
		}
		out[answer(m)]++
	}
	return out
}

// answer is what a client was answered, as a window counts it: the
// outcome, and the code when there is one.
func answer(op *history.Op) string {
	if op.Code == "" {
		return op.Outcome
	}
	return op.Outcome + " " + op.Code
}

// countDamagedView counts master starts into window 4: a durable prefix
// present and the producer view absent, malformed, or a valid view the
// harness wrote above every view a batch of the history was appended under
// (a view no primary claimed; one a primary claimed and never appended
// under is an ordinary state, not this window).
func countDamagedView(in *Input) map[string]int {
	out := map[string]int{}
	keysAt(in, func(s start, ns *namespaceAt) {
		if !ns.prefixPresent() || len(ns.batches) == 0 {
			return
		}
		raw, present := ns.values[ns.ks.ProducerView()]
		switch v, err := batchlog.DecodeProducerView(raw); {
		case !present:
			out["view absent"] += s.nodes
		case err != nil:
			out["view malformed"] += s.nodes
		default:
			var top int64
			for _, bv := range ns.batchView {
				top = max(top, bv)
			}
			if ns.viewByHarness && v > top {
				out["view ahead"] += s.nodes
			}
		}
	})
	return out
}

// countCommitEndsBadly counts window 5: client mutations whose outcome was
// unknown (the commit ended badly before they were answered) and whose
// entry is in the durable history.
func countCommitEndsBadly(in *Input) map[string]int {
	d, err := durableOf(in)
	if err != nil {
		return nil
	}
	n := refusalsNotDurable(in, newDurableLog(d), &evidence{}, map[string]int{})
	if n == 0 {
		return map[string]int{}
	}
	return map[string]int{"unknown outcome, durable": n}
}

// countZombiePrimary counts window 3: a primary the harness paused is
// resumed after a successor claimed a higher producer view and before that
// successor's first append (no batch put between the claim and the
// resume), so the producer-view compare is all that stands between the
// resumed node's appends and the OpLog. What it reached is counted from the
// client history: each mutation the resumed node answered after its
// resume, by outcome and code (how its append was refused, or not). A
// resume into the window with no mutation answered after it did not reach
// the append and counts nothing.
func countZombiePrimary(in *Input) map[string]int {
	out := map[string]int{}
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return out
	}
	pausedAt := map[string]int64{} // node → etcd revision of its pause while primary
	for _, e := range in.Events {
		node := strings.Trim(e.Target, "[]")
		switch {
		case e.Kind == "fault" && e.Name == "pause" && e.Anchor != nil && e.Anchor.Roles[node] == "primary":
			pausedAt[node] = e.Anchor.EtcdRev
		case e.Kind == "heal" && e.Name == "pause" && e.EtcdRevision > 0:
			from, ok := pausedAt[node]
			if !ok {
				continue
			}
			delete(pausedAt, node)
			if !successorHeldBeforeAppend(in, ks, from, e.EtcdRevision, node) {
				continue
			}
			for _, op := range in.Ops {
				if _, mutation := ackedOp(&op); mutation && op.Node == node && op.Complete >= e.At {
					out["answered after its resume: "+answer(&op)]++
				}
			}
			for _, d := range deposedAppends(in) {
				if d.node == node && d.rev > e.EtcdRevision {
					out["a batch it appended after its resume, its successor serving"]++
				}
			}
		}
	}
	return out
}

// successorHeldBeforeAppend: between revisions from and to, a successor
// took over from deposed — it claimed the producer view (a put the harness
// did not write), or, for a master that claims none, another node was seen
// serving as the primary (the timeline's role change, with etcd's revision
// once the harness saw it) — and no batch was put after the last such
// takeover up to to.
func successorHeldBeforeAppend(in *Input, ks keyspace.Keyspace, from, to int64, deposed string) bool {
	injected := injectedRevisions(in.Events)
	var claim int64
	for _, e := range in.Etcd {
		if e.Revision > from && e.Revision <= to && e.Type == "put" && e.Key == ks.ProducerView() && !injected[e.Revision] {
			claim = e.Revision
		}
	}
	if claim == 0 {
		for _, s := range servesOf(in.Events) {
			if s.node != deposed && s.rev > from && s.rev <= to {
				claim = s.rev
			}
		}
	}
	if claim == 0 {
		return false
	}
	for _, e := range in.Etcd {
		if _, ok := ks.ParseBatch(e.Key); ok && e.Type == "put" && e.Revision > claim && e.Revision <= to {
			return false
		}
	}
	return true
}
