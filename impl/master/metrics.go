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
	leaseLosses         *prometheus.CounterVec
	viewClaims          prometheus.Counter
	promotable          prometheus.Gauge
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
	m.role = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_role", Help: "1 for the role this node is in (standby, promoting, primary, failed)"}, []string{"role"})
	m.roleGeneration = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_role_generation", Help: "local, non-persisted role generation; changes on every role transition"})
	m.serving = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_serving", Help: "1 while this node serves client mutations"})
	m.appliedBatch = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_applied_batch_id", Help: "last complete batch applied to local state"})
	m.appliedSeq = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_applied_seq", Help: "last sequence id applied to local state"})
	m.durablePrefix = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_durable_prefix_batch_id", Help: "durable prefix batch id as last read or written"})
	m.producerView = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_producer_view", Help: "producer view this node writes under (primary) or last saw"})
	m.promotions = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_promotions_total", Help: "promotions to primary"})
	m.promotionSeconds = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_promotion_duration_seconds", Help: "election win to serving, last promotion"})
	m.demotions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_demotions_total", Help: "primary terms ended, by reason"}, []string{"reason"})
	m.batchesCommitted = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_batches_committed_total", Help: "batches this node appended as primary"})
	m.entriesCommitted = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_entries_committed_total", Help: "entries this node appended as primary"})
	m.commitFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_commit_failures_total", Help: "failed client mutations, by stable error code"}, []string{"code"})
	m.batchesApplied = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_batches_applied_total", Help: "batches applied from the OpLog as standby"})
	m.applyFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_apply_failures_total", Help: "OpLog reads or applies that failed, by code"}, []string{"code"})
	m.bootstrapSource = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_bootstrap_source", Help: "1 for the source the last bootstrap used (latest, fallback, oplog, empty)"}, []string{"source"})
	m.bootstrapSeconds = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_bootstrap_duration_seconds", Help: "duration of the last bootstrap"})
	m.bootstrapFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_bootstrap_failures_total", Help: "bootstrap attempts that failed closed"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_client_requests_total", Help: "client API requests by op and outcome (ok, failed, unknown)"}, []string{"op", "outcome"})
	m.snapshotAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_capture_attempts_total", Help: "snapshot attempts that got past admission, by result (published, failed)"}, []string{"result"})
	m.snapshotSkips = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_capture_skips_total", Help: "snapshot attempts skipped, by reason"}, []string{"reason"})
	m.snapshotFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_capture_failures_total", Help: "snapshot attempts failed, by stable code"}, []string{"code"})
	m.phaseSeconds = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_snapshot_phase_seconds", Help: "duration of the last snapshot's phases (copy, encode, decode, upload, cas)"}, []string{"phase"})
	m.snapshotLag = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_snapshot_lag_at_admission_batches", Help: "durable prefix minus applied batch at the last admission"})
	m.capturedBytes = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_captured_bytes", Help: "payload bytes of the last encoded capture"})
	m.latestSnapshotBatch = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_latest_snapshot_batch_id", Help: "cursor of the last snapshot this node published"})
	m.leaseAcquisitions = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_lease_acquisitions_total", Help: "maintenance lease acquisitions"})
	m.casConflicts = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_cas_conflicts_total", Help: "pointer CAS conflicts"})
	m.orphans = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_orphans_total", Help: "uploaded candidates left unpublished, by reason (lease_lost, conflict, not_newer, below_floor, upload_failed, other)"}, []string{"reason"})
	m.leaseLosses = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_lease_losses_total", Help: "maintenance lease found lost, by the step that found it (publish: the pointer CAS; retain: a retention cycle, which then ended)"}, []string{"step"})
	m.viewClaims = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_view_claims_total", Help: "producer views this node claimed (one per promotion that got that far)"})
	m.promotable = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_promotable", Help: "1 while this node may campaign: bootstrapped, and its cursor not below the compaction floor"})
	m.horizon = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_capacity_exhaustion_horizon_seconds", Help: "estimated time until the largest etcd member reaches the quota at the db growth rate of the last minute (+Inf: not growing)"})
	m.pointerBatch = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_snapshot_pointer_batch_id", Help: "last included batch of the snapshot a pointer slot names (latest, fallback); 0 absent or malformed"}, []string{"slot"})
	m.pointerAge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_snapshot_pointer_age_seconds", Help: "age of the snapshot a pointer slot names"}, []string{"slot"})
	m.pointerValid = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_snapshot_pointer_valid", Help: "1 when the pointer slot holds a record that decodes, 0 when malformed, -1 when absent"}, []string{"slot"})
	m.pointerVerified = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_snapshot_pointer_verified", Help: "1 when this node read the slot's snapshot completely and it verified, 0 when that failed, -1 not read by this node"}, []string{"slot"})
	m.pointerInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_snapshot_pointer_info", Help: "1 for the snapshot id each pointer slot names"}, []string{"slot", "snapshot_id"})
	m.lastSuccess = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_snapshot_last_success_timestamp_seconds", Help: "when this node last published a snapshot (unix seconds)"})
	m.lastFailure = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_snapshot_last_failure_timestamp_seconds", Help: "when a snapshot attempt of this node last failed (unix seconds)"})
	m.lastFailedPhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_snapshot_last_failed_phase", Help: "1 for the phase the last failed snapshot attempt failed in"}, []string{"phase"})
	m.captureEstimateMax = maxGauge{g: prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_capture_estimated_bytes_peak", Help: "largest estimated capture memory of an admitted attempt since start"})}
	m.bootstrapPhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_bootstrap_phase_seconds", Help: "the last bootstrap's phases: download (reading the snapshot's objects) and decode run side by side, replay after them"}, []string{"phase"})
	m.storeReady = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_snapshot_store_ready", Help: "1 once the snapshot store answered and its checksum validation is known; until then no publication (an outage is a snapshot stall, not a reason to stop)"})
	m.uploadsAborted = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_gc_uploads_aborted_total", Help: "unfinished multipart uploads under the snapshot prefix that GC aborted"})
	m.floor = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_compaction_floor_batch_id", Help: "compaction floor after this node's last retention cycle"})
	m.uncompacted = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_uncompacted_batches", Help: "durable prefix minus floor at the last status read or admission"})
	m.gcObjects = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_gc_objects_total", Help: "snapshot objects deleted by GC"})
	m.gcGroups = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_gc_groups_total", Help: "snapshot groups deleted by GC"})
	m.gcFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_gc_failures_total", Help: "snapshot groups GC failed to delete (retried next cycle)"})
	m.rangeDeletes = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_range_deletes_total", Help: "guarded OpLog range deletes committed"})
	m.rangeDeleted = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_range_deleted_batches_total", Help: "batch keys removed by range deletes"})
	m.rangeDeleteFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_range_delete_failures_total", Help: "range deletes that failed after the floor (retained, retried)"})
	m.rebootstraps = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_rebootstraps_total", Help: "live rebootstraps of a standby whose cursor fell below the compaction floor"})
	m.publishedAfterPromo = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_published_after_promotion_total", Help: "standby-captured snapshots whose publication completed after this node left the standby role"})
	m.gcBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_gc_bytes_total", Help: "bytes of snapshot objects deleted by GC"})
	m.snapshotStalled = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_snapshot_stalled", Help: "1 while latest is older than snapshot_stall_multiplier intervals and the OpLog has moved past it (read every etcd_status_interval_ms)"})
	m.latestAge = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_latest_snapshot_age_seconds", Help: "age of the latest pointer at the last status read (time since start when there is none)"})
	m.etcdDBSize = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_etcd_db_size_bytes", Help: "etcd dbSize per member (maintenance Status)"}, []string{"member"})
	m.etcdDBSizeInUse = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_etcd_db_size_in_use_bytes", Help: "etcd dbSizeInUse per member; dbSize minus this is what a defrag gives back"}, []string{"member"})
	m.etcdRevision = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_etcd_revision", Help: "highest etcd revision seen by the last status read"})
	m.etcdQuota = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_etcd_quota_bytes", Help: "etcd backend quota as configured (etcd_quota_backend_bytes)"})
	m.etcdQuotaUsed = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_etcd_quota_used_ratio", Help: "largest member dbSize over the quota; NOSPACE at 1"})
	m.etcdAlarms = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "oplogha_etcd_alarms", Help: "active etcd alarms by type (NOSPACE, CORRUPT)"}, []string{"alarm"})
	m.etcdStatusFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_etcd_status_failures_total", Help: "maintenance Status or AlarmList reads that failed"})
	m.floorCASFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "oplogha_floor_cas_failures_total", Help: "floor CAS attempts that failed (nothing deleted)"})
	m.verifiedObjects = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_snapshot_objects_verified_total", Help: "snapshot objects written and verified, by proof (checksum: the server validated and HEAD agrees; readback: a complete download)"}, []string{"proof"})
	m.admittedLagMax = maxGauge{g: prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_snapshot_admitted_lag_max_batches", Help: "largest lag at admission that was admitted since start (the threshold is max_snapshot_lag_batches)"})}
	m.legacyImports = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oplogha_legacy_imports_total", Help: "explicit legacy snapshot imports by outcome (imported, already_imported, failed)"}, []string{"outcome"})
	m.legacyImportSeconds = prometheus.NewGauge(prometheus.GaugeOpts{Name: "oplogha_legacy_import_seconds", Help: "duration of the last legacy import: convert, write, verify and commit"})
	for _, c := range []prometheus.Collector{m.leaseLosses, m.viewClaims, m.promotable, m.horizon, m.pointerBatch, m.pointerAge, m.pointerValid, m.pointerVerified,
		m.pointerInfo, m.lastSuccess, m.lastFailure, m.lastFailedPhase, m.captureEstimateMax.g, m.bootstrapPhase, m.storeReady, m.uploadsAborted} {
		f(c)
	}
	for _, c := range []prometheus.Collector{m.legacyImports, m.legacyImportSeconds, m.gcBytes, m.floorCASFailures, m.verifiedObjects, m.admittedLagMax.g, m.snapshotStalled, m.latestAge, m.etcdDBSize, m.etcdDBSizeInUse, m.etcdRevision,
		m.etcdQuota, m.etcdQuotaUsed, m.etcdAlarms, m.etcdStatusFailures} {
		f(c)
	}
	for _, c := range []prometheus.Collector{m.snapshotAttempts, m.snapshotSkips, m.snapshotFailures, m.phaseSeconds, m.snapshotLag, m.capturedBytes,
		m.latestSnapshotBatch, m.leaseAcquisitions, m.casConflicts, m.orphans, m.publishedAfterPromo, m.rebootstraps,
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
