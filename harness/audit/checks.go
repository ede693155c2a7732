package audit

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/model"
	"github.com/oplogha/oplogha/impl/contract"
)

// Convergence checks that every running node ends at the final durable
// prefix with the model's state digest for it (rebuilt from the etcd
// history, converged-on-model), and, as before, that the nodes agree with
// one another. Where the model has no start for the final state (a
// history that starts from a legacy import whose snapshot the bundle did
// not keep) or the bundle holds no durable prefix at all, the
// summary says so and only the nodes' agreement is judged; any other
// reason the model cannot rebuild the final state (a batch upstream's
// applier refuses, a history lost) fails.
func Convergence(in *Input) Result {
	var ev evidence
	var first *Node
	n := 0
	for i := range in.Nodes {
		node := &in.Nodes[i]
		if !node.Running {
			continue
		}
		n++
		if first == nil {
			first = node
			continue
		}
		if node.State.Cursor != first.State.Cursor || node.State.Digest != first.State.Digest {
			ev.add("%s at batch %d seq %d digest %s; %s at batch %d seq %d digest %s", first.Name, first.State.Cursor.BatchID,
				first.State.Cursor.Seq, first.State.Digest,
				node.Name, node.State.Cursor.BatchID, node.State.Cursor.Seq, node.State.Digest)
		}
	}
	if n == 0 {
		ev.add("no running node")
	}
	summary := fmt.Sprintf("%d running nodes", n)
	if first != nil && ev.empty() {
		summary += fmt.Sprintf(" at batch %d, digest %s", first.State.Cursor.BatchID, shortDigest(first.State.Digest))
	}
	exercised := map[string]int{}
	final, s, err := finalState(in)
	switch {
	case errors.Is(err, model.ErrNoStart) || errors.Is(err, errNoDurablePrefix):
		summary += fmt.Sprintf("; not judged against the model (%v): the nodes compared with each other only", err)
	case err != nil:
		ev.add("[converged-on-model] %v", err)
	default:
		digest := s.Digest()
		summary += fmt.Sprintf("; the model at the final durable prefix (batch %d): digest %s", final.Cursor.BatchID, shortDigest(digest))
		for _, node := range in.Nodes {
			if !node.Running {
				continue
			}
			exercised["converged-on-model"]++
			switch cur := contract.Cursor(node.State.Cursor); {
			case !exposesState(node):
				ev.add("[converged-on-model] %s: state not exposed (no digest, no dump): the model cannot judge it", node.Name)
			case cur != final.Cursor:
				ev.add("[converged-on-model] %s at %s, the final durable prefix is %s (rev %d)", node.Name, cur, final.Cursor, final.Revision)
			case node.State.Digest != digest:
				ev.add("[converged-on-model] %s at %s: digest %s, the model's %s", node.Name, cur, node.State.Digest, digest)
			}
		}
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list(), Exercised: exercised}
}

func shortDigest(d string) string {
	if len(d) > 19 {
		return d[:19] + "…"
	}
	return d
}

// RecoverySource checks every running node's bootstrap source against the
// sources the scenario allows.
func RecoverySource(in *Input) Result {
	if len(in.Expect.RecoverySource) == 0 {
		return Result{Pass: false, Summary: "the scenario names no expected recovery source", Evidence: []string{"add expect.recovery_source"}}
	}
	var ev evidence
	var seen []string
	for _, n := range in.Nodes {
		if !n.Running {
			continue
		}
		src := n.Health.Bootstrap.Source
		if n.Health.Role == "failed" && !n.Health.Serving && src == "" {
			src = "fail-closed"
			if n.State.Objects != 0 || n.State.Cursor.BatchID != 0 {
				ev.add("%s failed closed but exposes state: %d objects at batch %d", n.Name, n.State.Objects, n.State.Cursor.BatchID)
			}
		}
		seen = append(seen, n.Name+"="+src)
		if !slices.Contains(in.Expect.RecoverySource, src) {
			ev.add("%s bootstrapped from %q, expected one of %v (error: %s)", n.Name, src, in.Expect.RecoverySource, n.Health.Bootstrap.Error)
		}
	}
	if len(seen) == 0 {
		ev.add("no running node")
	}
	return Result{Pass: ev.empty(), Summary: strings.Join(seen, ", "), Evidence: ev.list()}
}

// MinimumWork fails a run that did too little to prove anything: too few
// acknowledged ops, a fault step that did not inject, too few promotions.
func MinimumWork(in *Input) Result {
	var ev evidence
	ok := AcknowledgedMutations(in.Ops)
	minOK := in.Expect.MinOKOps
	if minOK <= 0 {
		minOK = 100
	}
	if ok < minOK {
		ev.add("%d acknowledged mutations, the scenario needs at least %d", ok, minOK)
	}
	injected, settled, failedSteps, promotions := 0, 0, 0, 0
	for _, e := range in.Events {
		switch {
		case e.Kind == "heal" && e.OK && e.Settle:
			settled++
		case (e.Kind == "fault" || e.Kind == "heal") && e.OK:
			injected++
		case e.Kind == "step" && !e.OK:
			failedSteps++
			ev.add("step %s did not complete: %s", e.Name, e.Detail)
		case e.Kind == "role" && strings.HasSuffix(e.Detail, "→ primary"):
			promotions++
		}
	}
	if injected < in.Steps {
		ev.add("%d of %d fault/heal steps injected", injected, in.Steps)
	}
	if promotions < in.Expect.MinPromotions {
		ev.add("%d promotions observed, the scenario needs %d", promotions, in.Expect.MinPromotions)
	}
	reached := windowCounts(in)
	etcdMissing := in.Unread.missing(EvidenceEtcd)
	for _, id := range in.Expect.Windows {
		switch {
		case etcdMissing != "":
			// the windows are counted from etcd's history
			ev.add("window %s: %s", id, etcdMissing)
		case reached["window "+id] == 0:
			w, _ := WindowByID(id)
			ev.add("window %s was never reached (%s): the run proves nothing about the bugs that live there", id, w.Doc)
		}
	}
	healedAtSettle := ""
	if settled > 0 {
		healedAtSettle = fmt.Sprintf(" (and %d healed after the steps)", settled)
	}
	windows := ""
	for _, id := range in.Expect.Windows {
		windows += fmt.Sprintf(", window %s reached %d×", id, reached["window "+id])
	}
	return Result{Pass: ev.empty(), Summary: fmt.Sprintf("%d acknowledged mutations, %d/%d faults and heals%s, %d "+
		"promotions%s", ok, injected, in.Steps, healedAtSettle, promotions, windows), Evidence: ev.list(), Exercised: reached}
}

// ObjectsAudit checks the pointers the run ended with: each slot present must
// decode, and the snapshot it names must open by exact keys and verify
// (descriptor, manifest, segments and every chunk held to its size and CRC32C, then decoded).
func ObjectsAudit(in *Input) Result {
	if in.Objects == nil {
		return Result{Pass: true, Summary: "not applicable: the run had no snapshot store"}
	}
	var ev evidence
	var parts []string
	for _, p := range in.Objects.Pointers {
		switch {
		case !p.Valid:
			ev.add("%s pointer is malformed at the end: %s", p.Slot, p.Error)
		case !p.Verified:
			ev.add("%s pointer names %s, which does not verify: %s", p.Slot, p.SnapshotID, p.Error)
		default:
			parts = append(parts, p.Slot+" "+p.SnapshotID+" verified")
		}
	}
	sampled := 0
	for _, x := range in.Retention {
		if x.Groups < 0 {
			continue
		}
		sampled++
		for _, m := range x.MissingTargets {
			ev.add("[pointer-targets-present] at %s: the %s pointer names a snapshot the store no longer holds (the pointer was "+
				"unchanged before and after the listing)", seconds(x.At), m)
		}
	}
	exercised := map[string]int{"pointer-targets-present": sampled + len(in.Objects.Pointers)}
	summary := fmt.Sprintf("%s: %d snapshot groups, %d objects, %d bytes", in.Objects.Store, in.Objects.Snapshots, in.Objects.Objects, in.Objects.Bytes)
	if len(parts) > 0 {
		summary += "; " + strings.Join(parts, ", ")
	}
	if acc := in.Objects.Access; acc != nil {
		judged, unjudged := judgeUploads(in, &ev)
		exercised["upload-advances"] = judged
		exercised["publication-backoff"] = judgeBackoff(in, &ev)
		summary += "; " + storeAccessNote(acc, judged, unjudged)
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list(), Exercised: exercised}
}

// AcknowledgedMutations counts the acknowledged puts, removes and segment
// ops of a history: the work minimum-work judges (the runner waits for the
// same count before it settles).
func AcknowledgedMutations(ops []history.Op) int {
	n := 0
	for _, op := range ops {
		if op.Outcome == history.OK && op.Kind != history.Get {
			n++
		}
	}
	return n
}

// OperatorVerify holds the namespace the run left to the operator's
// verifier: a run whose faults only stopped, froze, cut off or restarted
// parts must leave a namespace with no violation. In a run that damaged
// records on purpose (a kind the fault registry marks Damages), the
// violations at what is still damaged at the end (an etcd key a fault
// wrote last, a snapshot whose objects a fault damaged) are counted and
// named, not judged, and every other violation fails as in any run.
func OperatorVerify(in *Input) Result {
	if in.Verify == nil {
		return Result{Pass: true, Summary: "not applicable: the bundle has no verifier report"}
	}
	v := in.Verify
	summary := fmt.Sprintf("%d keys, %d batch records at revision %d: %d violations", v.Keys, v.Batches, v.Revision, len(v.Violations))
	dmg := damageOf(in)
	var ev evidence
	excused := 0
	for _, x := range v.Violations {
		if why := dmg.excuses(x); why != "" {
			excused++
			continue
		}
		ev.add("%s: %s", x.Key, x.Reason)
	}
	if !dmg.empty() {
		summary += fmt.Sprintf("; %d on what the run damaged on purpose (%s), not judged; the rest judged", excused, dmg)
	}
	for _, name := range dmg.unnamed {
		ev.add("the fault %s damaged records without saying which: the verifier's report cannot be judged around it", name)
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list(), Exercised: map[string]int{"operator-verify": 1,
		"operator-verify: violations on damaged records": excused}}
}

// damage is what the run's faults damaged on purpose and left damaged: the
// etcd keys whose last write in the history is a fault's, and the
// snapshots whose objects a fault damaged behind the store.
type damage struct {
	keys      map[string]string // key → the fault that wrote it last
	snapshots map[string]string // snapshot id → the fault that damaged it
	unnamed   []string          // damaging faults that recorded neither
}

func damageOf(in *Input) damage {
	d := damage{keys: map[string]string{}, snapshots: map[string]string{}}
	byRev := map[int64]string{}
	for _, e := range in.Events {
		if e.Kind != "fault" || !e.OK || !faults.Damaging(e.Name) {
			continue
		}
		for _, rev := range e.Revisions {
			byRev[rev] = e.Name
		}
		for _, id := range e.Corrupted {
			d.snapshots[id] = e.Name
		}
		if len(e.Revisions) == 0 && len(e.Corrupted) == 0 && !slices.Contains(d.unnamed, e.Name) {
			d.unnamed = append(d.unnamed, e.Name)
		}
	}
	last := map[string]int64{}
	for _, e := range in.Etcd {
		last[e.Key] = e.Revision
	}
	for key, rev := range last {
		if name, ok := byRev[rev]; ok {
			d.keys[key] = name
		}
	}
	return d
}

func (d damage) empty() bool { return len(d.keys) == 0 && len(d.snapshots) == 0 && len(d.unnamed) == 0 }

// excuses says why a violation is the damage's own doing ("" when it is
// not): it is at a damaged key, or it names a damaged snapshot.
func (d damage) excuses(x VerifyViolation) string {
	if name, ok := d.keys[x.Key]; ok {
		return name
	}
	for id, name := range d.snapshots {
		if strings.Contains(x.Reason, "snapshot "+id+" ") {
			return name
		}
	}
	return ""
}

func (d damage) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(d.keys)) {
		parts = append(parts, k+" by "+d.keys[k])
	}
	for _, id := range slices.Sorted(maps.Keys(d.snapshots)) {
		parts = append(parts, "snapshot "+id+" by "+d.snapshots[id])
	}
	if len(parts) == 0 {
		return "nothing left damaged"
	}
	if len(parts) > 6 {
		parts = append(parts[:6], fmt.Sprintf("%d more", len(parts)-6))
	}
	return strings.Join(parts, ", ")
}
