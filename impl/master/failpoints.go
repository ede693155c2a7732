package master

import (
	"errors"
	"sync/atomic"
	"time"

	gofail "go.etcd.io/gofail/runtime"
)

// Failpoints are the master's named crash windows, registered with the gofail
// runtime: enable them with GOFAIL_FAILPOINTS="name=term;…" at start or over
// GOFAIL_HTTP at run time (PUT /name with a term such as `1*panic`,
// `sleep(2000)`, `return(true)`, or `1*return("hold")` to hold the first
// caller until the failpoint is cleared); GET /name/count says how many
// times its term fired, which is how a harness knows a window was reached. Every failpoint of the process is in this
// list, with where it fires.
var Failpoints = []FailpointInfo{
	{fpPrimaryBeforeAppend, "primaryBeforeAppend", "primary: batch built, append transaction not yet sent"},
	{fpPrimaryAfterAppend, "primaryAfterAppend", "primary: batch durable in etcd, not yet applied locally nor acknowledged"},
	{fpAppendMinEntries, "appendMinEntries", "not a window: with return(N), primaryBeforeAppend and primaryAfterAppend are " +
		"evaluated only for batches of at least N entries (a crash window reached with a batch of several clients' entries, " +
		"not the one-entry batch a light load builds)"},
	{fpPrimaryAfterCommit, "primaryAfterCommit", "primary: batch applied locally, acknowledgements about to go out"},
	{fpPrimaryAppendUnknown, "primaryAppendUnknown", "primary: an append's outcome is unknown (no answer), the read-back that " +
		"settles it not yet made (its resolve timeout not yet started)"},
	{fpStandbyBeforeApply, "standbyBeforeApply", "standby: batch read and validated, not yet applied"},
	{fpStandbyAfterApply, "standbyAfterApply", "standby: batch applied, cursor advanced"},
	{fpRebootstrapAfterRestore, "rebootstrapAfterRestore", "rebootstrap: the cursor below the floor, a snapshot covering it " +
		"restored into a temporary state (the pointer read before this), its OpLog suffix not yet replayed"},
	{fpPromoteAfterElected, "promoteAfterElected", "promotion: election won, producer view not yet claimed"},
	{fpPromoteAfterClaim, "promoteAfterClaim", "promotion: higher producer view claimed, state not yet complete to the durable prefix"},
	{fpPromoteBeforeServe, "promoteBeforeServe", "promotion: state complete, not yet serving"},
	{fpPrimaryBeforeStepDown, "primaryBeforeStepDown", "primary: its term ended (election session lost, committer failed, " +
		"or shutdown), not yet stepped down: still marked serving, so reads and writes still arrive (a deposed primary that has not noticed)"},
	{fpSnapshotBeforeLease, "snapshotBeforeLease", "standby snapshot: admitted (a snapshot is due, the cursor above latest), " +
		"the maintenance lease not yet asked for (admission is made again under it)"},
	{fpSnapshotAfterCopy, "snapshotAfterCopy", "standby snapshot: capture copied, role generation not yet re-checked (a promotion here discards it)"},
	{fpSnapshotTornCursor, "snapshotTornCursor", "standby snapshot: with return(true) the capture's sequence cursor is off " +
		"by one from its batch (the cursor check must reject it)"},
	{fpSnapshotCorruptUpload, "snapshotCorruptUpload", "snapshot store: with return(true) one byte of the next object sent " +
		"is flipped after its checksum was computed (the server or the readback must refuse it)"},
	{fpSnapshotBeforeUpload, "snapshotBeforeUpload", "standby snapshot: capture valid, its first part (segments.bin) " +
		"encoded and decode-checked (the encoder goes on), the candidate prefix not yet checked, nothing uploaded yet"},
	{fpSnapshotAfterObject, "snapshotAfterObject", "standby snapshot: after each object is written and verified (chunks, " +
		"then segments, manifest, descriptor); count terms pick one, e.g. 2*off->1*panic"},
	{fpSnapshotBeforeHEAD, "snapshotBeforeHEAD", "snapshot store: before every HEAD the master sends (verification of an upload, revalidation)"},
	{fpSnapshotBeforeCAS, "snapshotBeforeCAS", "standby snapshot: every object written and verified, pointer CAS not yet sent"},
	{fpSnapshotCASRefused, "snapshotCASRefused", "standby snapshot: with return(true) the pointer CAS is not sent and the attempt " +
		"is refused as a CAS conflict (a publication refused for certain, after its upload)"},
	{fpSnapshotAfterCAS, "snapshotAfterCAS", "standby snapshot: pointer CAS committed, not yet logged, counted or followed by retention"},
	{fpMaintainAfterGC, "maintainAfterGC", "retention: snapshot GC done, compaction floor not yet published"},
	{fpMaintainAfterFloor, "maintainAfterFloor", "retention: floor published, covered batches not yet deleted"},
	{fpMaintainGCDeleteFails, "maintainGCDeleteFails", "retention: with return(true) a snapshot group's GC delete fails (counted, retried next cycle)"},
	{fpMaintainFloorCASFails, "maintainFloorCASFails", "retention: with return(true) the floor CAS fails (nothing is deleted)"},
	{fpMaintainDeleteFails, "maintainDeleteFails", "retention: with return(true) the range delete after the floor fails (retained, retried next cycle)"},
	{fpLegacyImportAfterWrite, "legacyImportAfterWrite", "legacy import: the converted snapshot written and verified, the " +
		"import transaction not yet sent (an orphan, the namespace still fresh)"},
	{fpLegacyImportAfterCommit, "legacyImportAfterCommit", "legacy import: the import transaction committed, the state not " +
		"yet installed on the importing primary"},
}

// FailpointInfo names one failpoint.
type FailpointInfo struct {
	fp          *gofail.Failpoint
	Name, Where string
}

var (
	fpPrimaryBeforeAppend     = gofail.NewFailpoint("primaryBeforeAppend")
	fpPrimaryAfterAppend      = gofail.NewFailpoint("primaryAfterAppend")
	fpPrimaryAfterCommit      = gofail.NewFailpoint("primaryAfterCommit")
	fpAppendMinEntries        = gofail.NewFailpoint("appendMinEntries")
	fpPrimaryAppendUnknown    = gofail.NewFailpoint("primaryAppendUnknown")
	fpStandbyBeforeApply      = gofail.NewFailpoint("standbyBeforeApply")
	fpStandbyAfterApply       = gofail.NewFailpoint("standbyAfterApply")
	fpRebootstrapAfterRestore = gofail.NewFailpoint("rebootstrapAfterRestore")
	fpPromoteAfterElected     = gofail.NewFailpoint("promoteAfterElected")
	fpPromoteAfterClaim       = gofail.NewFailpoint("promoteAfterClaim")
	fpPromoteBeforeServe      = gofail.NewFailpoint("promoteBeforeServe")
	fpPrimaryBeforeStepDown   = gofail.NewFailpoint("primaryBeforeStepDown")

	fpLegacyImportAfterWrite  = gofail.NewFailpoint("legacyImportAfterWrite")
	fpLegacyImportAfterCommit = gofail.NewFailpoint("legacyImportAfterCommit")

	fpSnapshotBeforeLease   = gofail.NewFailpoint("snapshotBeforeLease")
	fpSnapshotAfterCopy     = gofail.NewFailpoint("snapshotAfterCopy")
	fpSnapshotBeforeUpload  = gofail.NewFailpoint("snapshotBeforeUpload")
	fpSnapshotBeforeCAS     = gofail.NewFailpoint("snapshotBeforeCAS")
	fpSnapshotAfterCAS      = gofail.NewFailpoint("snapshotAfterCAS")
	fpSnapshotCASRefused    = gofail.NewFailpoint("snapshotCASRefused")
	fpSnapshotTornCursor    = gofail.NewFailpoint("snapshotTornCursor")
	fpSnapshotCorruptUpload = gofail.NewFailpoint("snapshotCorruptUpload")
	fpSnapshotAfterObject   = gofail.NewFailpoint("snapshotAfterObject")
	fpSnapshotBeforeHEAD    = gofail.NewFailpoint("snapshotBeforeHEAD")
	fpMaintainAfterGC       = gofail.NewFailpoint("maintainAfterGC")
	fpMaintainAfterFloor    = gofail.NewFailpoint("maintainAfterFloor")

	fpMaintainGCDeleteFails = gofail.NewFailpoint("maintainGCDeleteFails")
	fpMaintainFloorCASFails = gofail.NewFailpoint("maintainFloorCASFails")
	fpMaintainDeleteFails   = gofail.NewFailpoint("maintainDeleteFails")
)

// hit evaluates a failpoint: a panic or sleep term acts here; the term
// return("hold") holds the caller here until the failpoint is changed or
// cleared (a window a harness can act in for as long as it needs, then
// release); any other return term's value is reported as true. It must run
// on a goroutine of the master's own (never inside an HTTP handler, whose
// panics net/http would recover).
func hit(fp *gofail.Failpoint) bool {
	v, err := fp.Acquire()
	if err != nil {
		return false
	}
	if s, ok := v.(string); ok && s == holdValue {
		hold(fp)
		return false
	}
	b, ok := v.(bool)
	return !ok || b
}

// hitBatch evaluates a failpoint of the append path for a batch of entries:
// not at all (its term neither fires nor counts) while appendMinEntries
// asks for a bigger batch, so a count term such as 1*panic or
// 1*return("hold") lands on the first batch big enough.
func hitBatch(fp *gofail.Failpoint, entries int) bool {
	if v, err := fpAppendMinEntries.Acquire(); err == nil {
		if n, ok := v.(int); ok && entries < n {
			return false
		}
	}
	return hit(fp)
}

// holdValue is the return value that makes a failpoint hold its caller.
const holdValue = "hold"

// maxHold bounds a hold nobody releases: the caller goes on after it.
const maxHold = 5 * time.Minute

// holding counts, per failpoint, the callers held there right now. It is
// atomic because gofail's own hit count is written under a lock its Status
// does not take: reading that count from another goroutine is a data race,
// while a load of holding that sees a caller orders every write it made
// before it was held (its hit counted included) before the load.
var holding = func() map[*gofail.Failpoint]*atomic.Int32 {
	m := make(map[*gofail.Failpoint]*atomic.Int32, len(Failpoints))
	for _, f := range Failpoints {
		m[f.fp] = new(atomic.Int32)
	}
	return m
}()

// hold waits until fp's term is no longer the one that held (cleared or
// replaced), polling, for at most maxHold.
func hold(fp *gofail.Failpoint) {
	if n := holding[fp]; n != nil {
		n.Add(1)
		defer n.Add(-1)
	}
	held, _, _ := fp.Status()
	for deadline := time.Now().Add(maxHold); time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if term, _, err := fp.Status(); err != nil || term != held {
			return
		}
	}
}

// ErrInjected is the error a return(true) failure failpoint stands for.
var ErrInjected = errors.New("injected failure (failpoint)")

// injected turns a failure failpoint into an error: nil unless it is armed.
func injected(fp *gofail.Failpoint) error {
	if hit(fp) {
		return ErrInjected
	}
	return nil
}
