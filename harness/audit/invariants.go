package audit

import (
	"fmt"
	"strings"
)

// Invariant is one property of the protocol that a run's leftovers can show.
// Most are checked by KeyspaceOrder at every revision of etcd's MVCC history
// (Audit "keyspace-order"); the rest name the audit that checks them.
// docs/audits.md is generated from this table (TestAuditsDocMatches).
type Invariant struct {
	ID    string // stable, short; evidence lines start with [ID]
	Rule  string // what must hold
	RFC   string // where the RFC asks for it
	Audit string // the audit that checks it
	// Exercise says what the audit counts as the invariant being put to the
	// test in a run (its Exercised count).
	Exercise string
}

// Invariants is every property the audits check, in docs order.
var Invariants = []Invariant{
	{"view-grows", "the producer view only grows, and every value written is a canonical view",
		"Complete OpLog Fallback: producer view/fencing data is valid", "keyspace-order", "view claims"},
	{"append-continues", "the durable prefix moves one batch at a time, in the revision that writes exactly that batch, " +
		"whose sequence continues the prefix before it",
		"Complete OpLog Fallback: batch ids and sequence ids continuous", "keyspace-order", "appends"},
	{"prefix-terminal", "the durable prefix never regresses, and after every revision the system writes its terminal batch " +
		"is present and ends at the prefix's sequence",
		"Terminology: durable prefix; Complete OpLog Fallback", "keyspace-order", "revisions that moved the prefix or deleted batches"},
	{"batch-once", "a batch key is written once and never overwritten",
		"Design Principles: immutable history", "keyspace-order", "batch puts"},
	{"delete-under-floor", "a batch is deleted only below a compaction floor committed at an earlier revision, and never the prefix's batch",
		"Ordered Floor Advancement: the floor is visible before covered batches disappear", "keyspace-order", "batch deletes"},
	{"floor-monotonic", "the compaction floor never decreases and is never deleted",
		"Ordered Floor Advancement: the floor never decreases", "keyspace-order", "floor puts"},
	{"floor-covered", "the floor moves only while latest and fallback are both valid, and never above the older one's last batch as of that revision",
		"Protected Set; Developer FAQ: the safe deletion boundary", "keyspace-order", "floor moves"},
	{"floor-verified", "the floor never moves onto a snapshot the run had corrupted before that revision (a snapshot that cannot verify)",
		"Design Principles 5: when validation is inconclusive, skip GC and pruning", "keyspace-order", "floor moves after a snapshot was corrupted"},
	{"lease-exclusive", "the maintenance key is only ever created while absent: no lease takes it over from another that still holds it",
		"Terminology: the maintenance lease serializes snapshot publication, pointer repair, GC and floor advancement", "keyspace-order", "maintenance key puts"},
	{"maintenance-fenced", "every floor move and batch delete happens while a maintenance lease holds the maintenance key",
		"Terminology: the maintenance lease serializes publication, GC and floor advancement", "keyspace-order", "floor moves and deletes; writer leases that ended"},
	{"pointers-monotonic", "latest's cursor only grows; fallback is only ever written with the value latest held just before; neither is deleted",
		"Pointer Publication: pointer cursors never regress", "keyspace-order", "pointer publications"},
	{"fallback-never-degrades", "no write puts into fallback a value that does not decode as a pointer: a malformed latest is " +
		"repaired with fallback kept, never rotated into it, so a valid fallback is never replaced by an unreadable one",
		"Pointer Publication: a malformed latest is repaired preserving the valid fallback; malformed data is never copied into a valid slot", "keyspace-order", "fallback writes"},
	{"pointer-fenced", "every pointer write is made by the current maintenance lease holder: the maintenance key is held, at " +
		"that revision, by the lease the snapshot id names",
		"Pointer Publication: the transaction compares lease ownership", "keyspace-order", "pointer publications; unpublished " +
			"candidates of leases since ended (each attempt that failed to publish)"},
	{"pointer-above-floor", "no pointer is written naming a snapshot below the compaction floor of that revision",
		"Lagging Live Standby; Developer FAQ: a reader may not skip to the floor", "keyspace-order", "pointer publications under a floor"},
	{"pointer-view", "a pointer's producer_view_version is the view under which its last included batch was appended",
		"State Contract: producer view version associated with the captured prefix", "keyspace-order",
		"pointer publications whose batch is in the history; of those, across a view change"},
	{"no-reinit", "the namespace is initialised (a zero durable prefix) only while it holds nothing else: no batch, view, floor, pointer or import record",
		"Design Principles 7: recovery does not guess; Destructive Recovery: residue fails startup", "keyspace-order",
		"zero prefixes written; histories lost by a fault"},
	{"prefix-covers", "the compaction floor and both pointers never name a batch (a pointer, a sequence id) above the durable prefix, " +
		"after any revision that writes the prefix, a batch, the floor, a pointer or the import record",
		"Terminology: durable prefix; Capture Protocol: Complete-Batch Linearization", "keyspace-order",
		"revisions that write a record while the prefix exists"},
	{"delete-under-pointers", "a batch is deleted only at or below the older valid pointer's last batch (not only the floor), and " +
		"never while neither pointer is valid (unless the harness damaged them)",
		"Snapshot GC and OpLog Pruning: Protected Set; Developer FAQ: the safe deletion boundary", "keyspace-order", "batch deletes"},
	{"zero-prefix-alone", "at every revision the system writes a record, a zero durable prefix stands alone: no batch, floor, pointer, " +
		"import record, or producer view older than the zero prefix",
		"Design Principles 7: recovery does not guess; Destructive Recovery: residue fails startup", "keyspace-order",
		"revisions that write a record while the prefix is zero"},
	{"standby-captured", "every published snapshot was captured by a node that was not the primary at its captured batch: the " +
		"writer token of the pointer's lease names a node other than the one that appended the batch (that claimed the producer view " +
		"it was appended under, as the election's leader) and still led the election at the publication",
		"Capture Protocol: only a standby captures; Promotion During Snapshot Work", "keyspace-order",
		"pointer publications tied to a publisher and a primary; those that cannot be tied, by reason"},
	{"ack-from-view-holder", "every acknowledgement that names its batch came from the node that held the producer view the batch " +
		"was appended under (the election's leader when that view was claimed): a deposed primary never appends and acknowledges " +
		"under its successor's view",
		"Complete OpLog Fallback: producer view/fencing data is valid (the view fences every append)", "keyspace-order",
		"acknowledgements tied to their batch's view holder; those that cannot be tied, by reason"},
	{"legacy-import-once", "a legacy import is recorded at most once, into a fresh namespace, in one revision that moves " +
		"the prefix to its cursor, writes its terminal batch 1 (and no other), and publishes the floor and latest",
		"Legacy Snapshot Removal: explicit import", "keyspace-order", "imports"},
	{"namespace-keys", "no key outside the contract appears in the namespace",
		"Etcd Keyspace", "keyspace-order", "keys"},
	{"operator-verify", "the namespace a run leaves passes oplogctl verify, but for what its faults left damaged on purpose (a key " +
		"a fault wrote last, a snapshot a fault damaged: named, not judged): every batch record " +
		"decodes as upstream's, batches are contiguous above the floor, the prefix's terminal batch is present, the floor is " +
		"at or below both pointers, each pointer's snapshot verifies",
		"Complete OpLog Fallback; Ordered Floor Advancement; Rollout: operator tooling", "operator-verify", "runs judged"},
	{"snapshot-decodes", "every snapshot a pointer named, as the harness copied it while a pointer still named it, decodes through " +
		"the contract as a recovering node reads it: exact keys, every object held to its size and CRC32C, upstream's encodings",
		"Snapshot Objects; Recovery Protocol: validate before use", "snapshot-content", "kept snapshots"},
	{"snapshot-content", "every published snapshot holds exactly the model's state at its cursor (the durable state of the last move " +
		"to that cursor before its pointer was put): every object, replica and segment, nothing more; and the durable prefix had " +
		"reached its cursor", "State Contract; Capture Protocol: Complete-Batch Linearization", "snapshot-content",
		"kept snapshots judged against the model"},
	{"import-snapshot-content", "the snapshot a legacy import publishes holds the fixture's content: the digest its generator " +
		"computed apart, its objects and sizes, its segment count; only then is it the model's start",
		"Legacy Snapshot Removal: explicit import", "snapshot-content", "imports"},
	{"final-snapshot-judged", "both final pointers' snapshots were kept and judged, unless a fault damaged them or the bundle's " +
		"budget for snapshot objects was spent", "Acceptance Criteria: recovery from the latest snapshot", "snapshot-content",
		"final pointers"},
	{"pointer-targets-present", "a pointer never names a snapshot group that is missing from the store while it is authoritative " +
		"(its descriptor, or any object the harness kept of it), and the final pointers verify",
		"GC: protected objects are never deleted", "objects", "store samples with both pointers unchanged across the listing"},
	{"upload-advances", "no object of a snapshot at or below latest's batch when its maintenance lease was taken is ever written: " +
		"a publisher that cannot advance latest stops before it captures (the object store's own record of the requests it served, " +
		"each snapshot tied by its id to its lease in etcd's history)",
		"Scheduling: at least one new complete batch beyond latest, reread after the lease", "objects",
		"snapshots the store recorded a write of, tied to their lease"},
	{"publication-backoff", "a publisher whose attempts fail in a row holds them back: once four candidates in a row were never " +
		"named by a pointer, its next attempts are at least 1.6 s apart (8 ticks of the smallest scheduler tick), as the object " +
		"store's own record of each candidate's first write shows (whole seconds: two attempts i < j more than 1.6 s × (j−i) − 1 s apart)",
		"Failure Semantics: payload upload fails → pointer unchanged, retry in a later cycle; Pointer Publication: a CAS failure does not retry by overwriting", "objects",
		"attempts after four failures in a row"},
	{"ack-durable", "every acknowledged mutation's entry (its op, tenant, key, and a put's size) is in a batch at or below the final " +
		"durable prefix, in the lineage the final prefix belongs to, as etcd's history decoded through the contract shows it",
		"Acceptance Criteria: final acknowledged-data audit; Terminology: durable prefix", "durable-acknowledgement",
		"acknowledged mutations"},
	{"ack-order", "acknowledgements of one key that did not overlap in time are in the OpLog in the order they were acknowledged",
		"Terminology: durable prefix; Integration and E2E", "durable-acknowledgement", "pairs of one key's acknowledgements, one before the other"},
	{"refusal-not-durable", "a mutation the master answered as not written (a definite failure) has no entry in the durable history: " +
		"one key's durable PUT_END (REMOVE) entries never outnumber its puts (removes) that were acknowledged or whose outcome is unknown",
		"Terminology: durable prefix; Failure Semantics (a commit whose outcome is unknown is never reported as failed)",
		"durable-acknowledgement", "keys with a refused put or remove"},
	{"deposed-append", "no batch lands after another node was seen serving as the primary holding entries only the node it " +
		"replaced took from clients: two primaries never both append (judged from the timeline's role changes, etcd's history " +
		"and the client history, whatever the master's fencing)",
		"Complete OpLog Fallback: producer view/fencing data is valid", "durable-acknowledgement",
		"role changes to primary with a known revision"},
	{"writer-stalled", "a node's acknowledgements never form a tail that never becomes durable: a writer that stopped while " +
		"its node went on acknowledging (named once, before the lost writes it explains)",
		"Terminology: durable prefix", "durable-acknowledgement", "nodes whose writer stopped"},
	{"recovered-equals-model", "each running node's final state equals the harness model's state at that node's cursor, rebuilt from " +
		"the durable history alone: every object, every segment, the digest; a node that exposes no state fails",
		"Recovery Protocol; Acceptance Criteria: final acknowledged-data audit", "recovered-state", "running nodes judged"},
	{"converged-on-model", "every running node ends at the final durable prefix with the model's state digest for it",
		"Recovery Protocol; Integration and E2E", "convergence", "running nodes judged against the model"},
	{"replicas-disjoint", "at every durable prefix, no two live objects hold overlapping memory: buffer replicas (memory, NVMe-oF) " +
		"on one segment endpoint whose [offset, offset+length) ranges intersect",
		"State Contract: the captured state is a state the primary could hold", "recovered-state", "durable batches applied by the model"},
	{"acknowledged-present", "nothing acknowledged is missing after recovery, and nothing unacknowledged is invented",
		"Acceptance Criteria: final acknowledged-data audit", "acknowledged-data", "acknowledged mutations"},
	{"linearizable", "the client history has a linearization",
		"Integration and E2E", "linearizability", "client operations"},
}

// failingTests names, for invariants another audit checks, the test that
// feeds that audit a violation; keyspace-order's are the cases of
// TestKeyspaceOrderFailsEveryViolation named after the invariant.
var failingTests = map[string]string{
	"ack-from-view-holder":    "TestAckFromViewHolder",
	"ack-durable":             "TestDurableAcknowledgementFailsALostAcknowledgement",
	"ack-order":               "TestDurableAcknowledgementFailsOutOfOrder",
	"refusal-not-durable":     "TestDurableAcknowledgementFailsADurableRefusal",
	"deposed-append":          "TestDurableAcknowledgementFailsADeposedAppend",
	"writer-stalled":          "TestDurableAcknowledgementNamesAWriterThatStopped",
	"recovered-equals-model":  "TestRecoveredStateFailsANodeOffTheModel",
	"converged-on-model":      "TestConvergenceFailsOffTheModel",
	"replicas-disjoint":       "TestRecoveredStateFailsOverlappingReplicas",
	"pointer-targets-present": "TestObjectsAuditFailsAMissingTarget",
	"upload-advances":         "TestObjectsAuditFailsAnUploadBelowLatest",
	"publication-backoff":     "TestObjectsAuditFailsAttemptsNotHeldBack",
	"snapshot-decodes":        "TestSnapshotContentFailsWhatItCannotJudge",
	"snapshot-content":        "TestSnapshotContentFailsEveryDifference",
	"import-snapshot-content": "TestSnapshotContentJudgesTheImportAgainstTheFixture",
	"final-snapshot-judged":   "TestSnapshotContentFailsWhatItCannotJudge",
	"operator-verify":         "TestOperatorVerifyFailsAViolation",
	"legacy-import-once":      "TestKeyspaceOrderAcceptsAnImport",
	"acknowledged-present":    "TestAcknowledgedData",
	"linearizable":            "TestLinearizability",
}

// FailingTest is the test that feeds inv's audit a run that breaks it.
func (inv Invariant) FailingTest() string {
	if t, ok := failingTests[inv.ID]; ok {
		return t
	}
	return "TestKeyspaceOrderFailsEveryViolation/" + inv.ID
}

// InvariantsMarkdown is the invariant table of docs/audits.md.
func InvariantsMarkdown() string {
	var b strings.Builder
	b.WriteString("| id | what must hold | RFC | audit | failing-history test | exercised when |\n|---|---|---|---|---|---|\n")
	for _, inv := range Invariants {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | `%s` | %s |\n", inv.ID, inv.Rule, inv.RFC, inv.Audit, inv.FailingTest(), inv.Exercise)
	}
	return b.String()
}

// InvariantByID finds one invariant.
func InvariantByID(id string) (Invariant, bool) {
	for _, inv := range Invariants {
		if inv.ID == id {
			return inv, true
		}
	}
	return Invariant{}, false
}
