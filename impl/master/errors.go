package master

import (
	"context"
	"errors"
	"net/http"

	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

// Outcome of a client mutation, as the harness's history records it.
const (
	OutcomeOK      = "ok"
	OutcomeFailed  = "failed"  // definitely not applied
	OutcomeUnknown = "unknown" // may or may not be durable
)

type codeRule struct {
	err     error
	code    string
	status  int
	outcome string
}

// codeRules map errors to stable codes, in precedence order: a stopped
// committer means the request was never staged, whatever ended the committer.
var codeRules = []codeRule{
	{errNotPrimary, "not_primary", http.StatusServiceUnavailable, OutcomeFailed},
	{oplog.ErrCommitterStopped, "not_serving", http.StatusServiceUnavailable, OutcomeFailed},
	{oplog.ErrUnknownOutcome, "commit_unknown", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrFenced, "fenced", http.StatusServiceUnavailable, OutcomeFailed},
	{oplog.ErrPrefixMoved, "prefix_moved", http.StatusServiceUnavailable, OutcomeFailed},
	{errNoCapacity, "no_capacity", http.StatusInsufficientStorage, OutcomeFailed},
	{state.ErrObjectExists, "object_exists", http.StatusConflict, OutcomeFailed},
	{state.ErrObjectNotFound, "object_not_found", http.StatusNotFound, OutcomeFailed},
	{state.ErrSegmentExists, "segment_exists", http.StatusConflict, OutcomeFailed},
	{state.ErrSegmentNotFound, "segment_not_found", http.StatusNotFound, OutcomeFailed},
	{state.ErrSegmentMismatch, "segment_mismatch", http.StatusUnprocessableEntity, OutcomeFailed},
	{errTooLarge, "too_large", http.StatusRequestEntityTooLarge, OutcomeFailed},
	{oplog.ErrBatchTooLarge, "too_large", http.StatusRequestEntityTooLarge, OutcomeFailed},
	{errUnknownTenant, "unknown_tenant", http.StatusForbidden, OutcomeFailed},
	{state.ErrMalformed, "malformed", http.StatusBadRequest, OutcomeFailed},
	{state.ErrUnknownOp, "unknown_op", http.StatusBadRequest, OutcomeFailed},
	{state.ErrDiscontinuous, "discontinuous", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrGap, "oplog_gap", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrRegression, "oplog_regression", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrNoDurablePrefix, "no_durable_prefix", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrResidue, "residue_without_history", http.StatusInternalServerError, OutcomeUnknown},
	{errBelowFloor, "below_floor", http.StatusInternalServerError, OutcomeUnknown},
	{errNotPromotable, "not_promotable", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrChecksum, "bad_checksum", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrVersion, "bad_version", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrKeyMismatch, "key_mismatch", http.StatusInternalServerError, OutcomeUnknown},
	{oplog.ErrMalformed, "malformed_record", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrNotFound, "legacy_not_found", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrID, "legacy_bad_id", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrDescriptor, "legacy_bad_descriptor", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrManifest, "legacy_manifest_mismatch", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrTruncated, "legacy_truncated", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrMalformed, "legacy_malformed", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrContent, "legacy_content_invalid", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrNotImportable, "legacy_not_importable", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrNamespaceNotEmpty, "legacy_namespace_not_empty", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrOtherImport, "legacy_other_import", http.StatusInternalServerError, OutcomeUnknown},
	{legacy.ErrImportRace, "legacy_import_race", http.StatusInternalServerError, OutcomeUnknown},
	{ErrEtcdRefused, "etcd_refused", http.StatusInternalServerError, OutcomeUnknown},
	{context.DeadlineExceeded, "timeout", http.StatusServiceUnavailable, OutcomeFailed},
	{context.Canceled, "canceled", http.StatusServiceUnavailable, OutcomeFailed},
}

func classify(err error) codeRule {
	for _, r := range codeRules {
		if errors.Is(err, r.err) {
			return r
		}
	}
	return codeRule{code: "internal", status: http.StatusInternalServerError, outcome: OutcomeUnknown}
}

// ErrorCode is the stable code of err, as logged ("code") and counted.
func ErrorCode(err error) string { return errorCode(err) }

// errorCode is the stable code logged and counted for err.
func errorCode(err error) string {
	if err == nil {
		return "none"
	}
	return classify(err).code
}
