package master

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the master's Prometheus series (prefix oplogha_; CONTRACT.md lists them).
type metrics struct {
	reg *prometheus.Registry

	role              *prometheus.GaugeVec
	roleGeneration    prometheus.Gauge
	serving           prometheus.Gauge
	appliedBatch      prometheus.Gauge
	appliedSeq        prometheus.Gauge
	durablePrefix     prometheus.Gauge
	producerView      prometheus.Gauge
	promotions        prometheus.Counter
	promotionSeconds  prometheus.Gauge
	demotions         *prometheus.CounterVec
	batchesCommitted  prometheus.Counter
	entriesCommitted  prometheus.Counter
	commitFailures    *prometheus.CounterVec
	batchesApplied    prometheus.Counter
	applyFailures     *prometheus.CounterVec
	bootstrapSource   *prometheus.GaugeVec
	bootstrapSeconds  prometheus.Gauge
	bootstrapFailures prometheus.Counter
	requests          *prometheus.CounterVec

	snapshotAttempts    *prometheus.CounterVec
	snapshotSkips       *prometheus.CounterVec
	snapshotFailures    *prometheus.CounterVec
	phaseSeconds        *prometheus.GaugeVec
	snapshotLag         prometheus.Gauge
	capturedBytes       prometheus.Gauge
	latestSnapshotBatch prometheus.Gauge
	leaseAcquisitions   prometheus.Counter
	casConflicts        prometheus.Counter
	orphans             *prometheus.CounterVec
	candidatesDeleted   *prometheus.CounterVec
	floorAboveSafe      prometheus.Counter
	snapshotBackoff     prometheus.Gauge
	leaseLosses         *prometheus.CounterVec
	viewClaims          prometheus.Counter
	promotable          prometheus.Gauge
	sessionsResumed     prometheus.Counter
	horizon             prometheus.Gauge
	pointerBatch        *prometheus.GaugeVec
	pointerAge          *prometheus.GaugeVec
	pointerValid        *prometheus.GaugeVec
	pointerVerified     *prometheus.GaugeVec
	pointerInfo         *prometheus.GaugeVec
	lastSuccess         prometheus.Gauge
	lastFailure         prometheus.Gauge
	lastFailedPhase     *prometheus.GaugeVec
	captureEstimateMax  maxGauge
	bootstrapPhase      *prometheus.GaugeVec
	storeReady          prometheus.Gauge
	uploadsAborted      prometheus.Counter
	publishedAfterPromo prometheus.Counter
	rebootstraps        prometheus.Counter
	floor               prometheus.Gauge
	uncompacted         prometheus.Gauge
	gcObjects           prometheus.Counter
	gcGroups            prometheus.Counter
	gcFailures          prometheus.Counter
	rangeDeletes        prometheus.Counter
	rangeDeleted        prometheus.Counter
	rangeDeleteFailures prometheus.Counter
	gcBytes             prometheus.Counter
	floorCASFailures    prometheus.Counter
	retainInconclusive  prometheus.Counter
	verifiedObjects     *prometheus.CounterVec
	admittedLagMax      maxGauge
	snapshotStalled     prometheus.Gauge
	latestAge           prometheus.Gauge
	legacyImports       *prometheus.CounterVec
	legacyImportSeconds prometheus.Gauge

	etcdDBSize         *prometheus.GaugeVec
	etcdDBSizeInUse    *prometheus.GaugeVec
	etcdRevision       prometheus.Gauge
	etcdQuota          prometheus.Gauge
	etcdQuotaUsed      prometheus.Gauge
	etcdAlarms         *prometheus.GaugeVec
	etcdStatusFailures prometheus.Counter
}

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &metrics{reg: reg}
	m.role = gaugeVec("oplogha_role", "1 for the role this node is in (standby, promoting, primary, failed)", "role")
	m.roleGeneration = gauge("oplogha_role_generation", "local, non-persisted role generation; changes on every role transition")
	m.serving = gauge("oplogha_serving", "1 while this node serves client mutations")
	m.appliedBatch = gauge("oplogha_applied_batch_id", "last complete batch applied to local state")
	m.appliedSeq = gauge("oplogha_applied_seq", "last sequence id applied to local state")
	m.durablePrefix = gauge("oplogha_durable_prefix_batch_id", "durable prefix batch id as last read or written")
	m.producerView = gauge("oplogha_producer_view", "producer view this node writes under (primary) or last saw")
	m.promotions = counter("oplogha_promotions_total", "promotions to primary")
	m.promotionSeconds = gauge("oplogha_promotion_duration_seconds", "election win to serving, last promotion")
	m.demotions = counterVec("oplogha_demotions_total", "primary terms ended, by reason", "reason")
	m.batchesCommitted = counter("oplogha_batches_committed_total", "batches this node appended as primary")
	m.entriesCommitted = counter("oplogha_entries_committed_total", "entries this node appended as primary")
	m.commitFailures = counterVec("oplogha_commit_failures_total", "failed client mutations, by stable error code", "code")
	m.batchesApplied = counter("oplogha_batches_applied_total", "batches applied from the OpLog as standby")
	m.applyFailures = counterVec("oplogha_apply_failures_total", "OpLog reads or applies that failed, by code", "code")
	m.bootstrapSource = gaugeVec("oplogha_bootstrap_source", "1 for the source the last bootstrap used (latest, fallback, oplog, empty)", "source")
	m.bootstrapSeconds = gauge("oplogha_bootstrap_duration_seconds", "duration of the last bootstrap")
	m.bootstrapFailures = counter("oplogha_bootstrap_failures_total", "bootstrap attempts that failed closed")
	m.requests = counterVec("oplogha_client_requests_total", "client API requests by op and outcome (ok, failed, unknown)", "op", "outcome")
	m.snapshotAttempts = counterVec("oplogha_capture_attempts_total", "snapshot attempts that got past admission, by result (published, failed)", "result")
	m.snapshotSkips = counterVec("oplogha_capture_skips_total", "snapshot attempts skipped, by reason", "reason")
	m.snapshotFailures = counterVec("oplogha_capture_failures_total", "snapshot attempts failed, by stable code", "code")
	m.phaseSeconds = gaugeVec("oplogha_snapshot_phase_seconds", "duration of the last snapshot's phases (copy, encode, decode, upload, cas)", "phase")
	m.snapshotLag = gauge("oplogha_snapshot_lag_at_admission_batches", "durable prefix minus applied batch at the last admission")
	m.capturedBytes = gauge("oplogha_captured_bytes", "payload bytes of the last encoded capture")
	m.latestSnapshotBatch = gauge("oplogha_latest_snapshot_batch_id", "cursor of the last snapshot this node published")
	m.leaseAcquisitions = counter("oplogha_lease_acquisitions_total", "maintenance lease acquisitions")
	m.casConflicts = counter("oplogha_cas_conflicts_total", "pointer CAS conflicts")
	m.orphans = counterVec("oplogha_orphans_total",
		"uploaded candidates left unpublished, by reason (lease_lost, conflict, not_newer, below_floor, upload_failed, other)", "reason")
	m.leaseLosses = counterVec("oplogha_lease_losses_total",
		"maintenance lease found lost, by the step that found it (publish: the pointer CAS; retain: a retention cycle, which then ended)", "step")
	m.viewClaims = counter("oplogha_view_claims_total", "producer views this node claimed (one per promotion that got that far)")
	m.sessionsResumed = counter("oplogha_election_sessions_resumed_total",
		"election sessions whose keep-alive gave up on a lease etcd still held, resumed on the same lease (the place in the queue kept)")
	m.promotable = gauge("oplogha_promotable", "1 while this node may campaign: bootstrapped, the compaction floor readable and its cursor not below it")
	m.horizon = gauge("oplogha_capacity_exhaustion_horizon_seconds",
		"estimated time until the largest etcd member reaches the quota at the db growth rate of the last minute (+Inf: not growing)")
	m.pointerBatch = gaugeVec("oplogha_snapshot_pointer_batch_id",
		"last included batch of the snapshot a pointer slot names (latest, fallback); 0 absent or malformed", "slot")
	m.pointerAge = gaugeVec("oplogha_snapshot_pointer_age_seconds", "age of the snapshot a pointer slot names", "slot")
	m.pointerValid = gaugeVec("oplogha_snapshot_pointer_valid", "1 when the pointer slot holds a record that decodes, 0 when malformed, -1 when absent", "slot")
	m.pointerVerified = gaugeVec("oplogha_snapshot_pointer_verified",
		"1 when this node read the slot's snapshot completely and it verified, 0 when that failed, -1 not read by this node", "slot")
	m.pointerInfo = gaugeVec("oplogha_snapshot_pointer_info", "1 for the snapshot id each pointer slot names", "slot", "snapshot_id")
	m.candidatesDeleted = counterVec("oplogha_snapshot_candidates_deleted_total",
		"written candidates whose publication was refused for certain (not newer, below the floor, CAS conflict, lease lost) and "+
			"whose objects this node deleted at once, by result (deleted, failed: left to GC)", "result")
	m.floorAboveSafe = counter("oplogha_floor_above_safe_total",
		"retention cycles that found the compaction floor above S_safe, the older pointer's batch (an outside write): they deleted only through S_safe")
	m.snapshotBackoff = gauge("oplogha_snapshot_backoff_seconds",
		"how long this node waits before its next snapshot attempt after failed ones in a row (0: not backing off)")
	m.lastSuccess = gauge("oplogha_snapshot_last_success_timestamp_seconds", "when this node last published a snapshot (unix seconds)")
	m.lastFailure = gauge("oplogha_snapshot_last_failure_timestamp_seconds", "when a snapshot attempt of this node last failed (unix seconds)")
	m.lastFailedPhase = gaugeVec("oplogha_snapshot_last_failed_phase", "1 for the phase the last failed snapshot attempt failed in", "phase")
	m.captureEstimateMax = maxGauge{g: gauge("oplogha_capture_estimated_bytes_peak", "largest estimated capture memory of an admitted attempt since start")}
	m.bootstrapPhase = gaugeVec("oplogha_bootstrap_phase_seconds",
		"the last bootstrap's phases: download (reading the snapshot's objects) and decode run side by side, replay after them", "phase")
	m.storeReady = gauge("oplogha_snapshot_store_ready",
		"1 once the snapshot store answered and its checksum validation is known; until then no publication (an outage is a snapshot stall, not a reason to stop)")
	m.uploadsAborted = counter("oplogha_gc_uploads_aborted_total", "unfinished multipart uploads under the snapshot prefix that GC aborted")
	m.floor = gauge("oplogha_compaction_floor_batch_id", "compaction floor after this node's last retention cycle")
	m.uncompacted = gauge("oplogha_uncompacted_batches", "durable prefix minus floor at the last status read or admission")
	m.gcObjects = counter("oplogha_gc_objects_total", "snapshot objects deleted by GC")
	m.gcGroups = counter("oplogha_gc_groups_total", "snapshot groups deleted by GC")
	m.gcFailures = counter("oplogha_gc_failures_total", "snapshot groups GC failed to delete (retried next cycle)")
	m.rangeDeletes = counter("oplogha_range_deletes_total", "guarded OpLog range deletes committed")
	m.rangeDeleted = counter("oplogha_range_deleted_batches_total", "batch keys removed by range deletes")
	m.rangeDeleteFailures = counter("oplogha_range_delete_failures_total", "range deletes that failed after the floor (retained, retried)")
	m.rebootstraps = counter("oplogha_rebootstraps_total", "live rebootstraps of a standby whose cursor fell below the compaction floor")
	m.publishedAfterPromo = counter("oplogha_published_after_promotion_total",
		"standby-captured snapshots whose publication completed after this node left the standby role")
	m.gcBytes = counter("oplogha_gc_bytes_total", "bytes of snapshot objects deleted by GC")
	m.snapshotStalled = gauge("oplogha_snapshot_stalled",
		"1 while latest is older than snapshot_stall_multiplier intervals and the OpLog has moved past it (read every etcd_status_interval_ms)")
	m.latestAge = gauge("oplogha_latest_snapshot_age_seconds", "age of the latest pointer at the last status read (time since start when there is none)")
	m.etcdDBSize = gaugeVec("oplogha_etcd_db_size_bytes", "etcd dbSize per member (maintenance Status)", "member")
	m.etcdDBSizeInUse = gaugeVec("oplogha_etcd_db_size_in_use_bytes", "etcd dbSizeInUse per member; dbSize minus this is what a defrag gives back", "member")
	m.etcdRevision = gauge("oplogha_etcd_revision", "highest etcd revision seen by the last status read")
	m.etcdQuota = gauge("oplogha_etcd_quota_bytes", "etcd backend quota as configured (etcd_quota_backend_bytes)")
	m.etcdQuotaUsed = gauge("oplogha_etcd_quota_used_ratio", "largest member dbSize over the quota; NOSPACE at 1")
	m.etcdAlarms = gaugeVec("oplogha_etcd_alarms", "active etcd alarms by type (NOSPACE, CORRUPT)", "alarm")
	m.etcdStatusFailures = counter("oplogha_etcd_status_failures_total", "maintenance Status or AlarmList reads that failed")
	m.floorCASFailures = counter("oplogha_floor_cas_failures_total", "floor CAS attempts that failed (nothing deleted)")
	m.retainInconclusive = counter("oplogha_retention_inconclusive_total",
		"retention cycles whose validation reads did not finish within their bound under the lease (nothing pruned; the next cycle tries again)")
	m.verifiedObjects = counterVec("oplogha_snapshot_objects_verified_total",
		"snapshot objects written and verified, by proof (checksum: the server validated and HEAD agrees; readback: a complete download)", "proof")
	m.admittedLagMax = maxGauge{g: gauge("oplogha_snapshot_admitted_lag_max_batches",
		"largest lag at admission that was admitted since start (the threshold is max_snapshot_lag_batches)")}
	m.legacyImports = counterVec("oplogha_legacy_imports_total", "explicit legacy snapshot imports by outcome (imported, already_imported, failed)", "outcome")
	m.legacyImportSeconds = gauge("oplogha_legacy_import_seconds", "duration of the last legacy import: convert, write, verify and commit")
	for _, c := range []prometheus.Collector{m.leaseLosses, m.viewClaims, m.promotable, m.sessionsResumed, m.horizon, m.pointerBatch, m.pointerAge, m.pointerValid, m.pointerVerified,
		m.pointerInfo, m.lastSuccess, m.lastFailure, m.lastFailedPhase, m.captureEstimateMax.g, m.bootstrapPhase, m.storeReady, m.uploadsAborted} {
		f(c)
	}
	for _, c := range []prometheus.Collector{m.legacyImports, m.legacyImportSeconds, m.gcBytes, m.floorCASFailures, m.retainInconclusive,
		m.verifiedObjects, m.admittedLagMax.g, m.snapshotStalled, m.latestAge, m.etcdDBSize, m.etcdDBSizeInUse,
		m.etcdRevision, m.etcdQuota, m.etcdQuotaUsed, m.etcdAlarms, m.etcdStatusFailures} {
		f(c)
	}
	for _, c := range []prometheus.Collector{m.snapshotAttempts, m.snapshotSkips, m.snapshotFailures, m.phaseSeconds, m.snapshotLag, m.capturedBytes,
		m.latestSnapshotBatch, m.leaseAcquisitions, m.casConflicts, m.orphans, m.candidatesDeleted, m.snapshotBackoff, m.floorAboveSafe, m.publishedAfterPromo, m.rebootstraps,
		m.floor, m.uncompacted, m.gcObjects, m.gcGroups, m.gcFailures, m.rangeDeletes, m.rangeDeleted, m.rangeDeleteFailures} {
		f(c)
	}
	for _, c := range []prometheus.Collector{m.role, m.roleGeneration, m.serving, m.appliedBatch, m.appliedSeq, m.durablePrefix, m.producerView,
		m.promotions, m.promotionSeconds, m.demotions, m.batchesCommitted, m.entriesCommitted, m.commitFailures, m.batchesApplied,
		m.applyFailures, m.bootstrapSource, m.bootstrapSeconds, m.bootstrapFailures, m.requests} {
		f(c)
	}
	return m
}

func (m *metrics) setRole(r Role) {
	for _, x := range []Role{RoleStarting, RoleStandby, RolePromoting, RolePrimary, RoleFailed} {
		v := 0.0
		if x == r {
			v = 1
		}
		m.role.WithLabelValues(string(x)).Set(v)
	}
}

// maxGauge is a gauge that only rises: the largest value observed.
type maxGauge struct {
	mu  sync.Mutex
	max float64
	g   prometheus.Gauge
}

func (m *maxGauge) observe(v float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v > m.max {
		m.max = v
		m.g.Set(v)
	}
}

// gauge, counter, gaugeVec and counterVec make the metrics of newMetrics:
// name, help and (for a vector) its label names.
func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}
