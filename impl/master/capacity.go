package master

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/state"
)

// capacityLoop reads etcd's size, revision and alarms through the
// maintenance API every etcd_status_interval_ms (RFC "Observability" and
// N12): this RFC adds no backpressure controller, so these gauges and
// snapshot_stalled are what tells an operator that history is piling up.
func (m *Master) capacityLoop(ctx context.Context) {
	m.m.etcdQuota.Set(float64(m.cfg.EtcdQuotaBytes))
	every := time.Duration(m.cfg.EtcdStatusMS) * time.Millisecond
	for ctx.Err() == nil {
		m.readCapacity(ctx)
		sleep(ctx, every)
	}
}

func (m *Master) readCapacity(ctx context.Context) {
	if m.cfg.EnableStandbySnapshot {
		m.readHistory(ctx)
	}
	var maxSize float64
	var rev int64
	for _, ep := range m.cli.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, m.cfg.requestTimeout())
		st, err := m.cli.Status(sctx, ep)
		cancel()
		if err != nil {
			m.m.etcdStatusFailures.Inc()
			continue
		}
		member := fmt.Sprintf("%x", st.Header.MemberId)
		m.m.etcdDBSize.WithLabelValues(member).Set(float64(st.DbSize))
		m.m.etcdDBSizeInUse.WithLabelValues(member).Set(float64(st.DbSizeInUse))
		maxSize = max(maxSize, float64(st.DbSize))
		rev = max(rev, st.Header.Revision)
	}
	if rev > 0 {
		m.m.etcdRevision.Set(float64(rev))
		m.m.etcdQuotaUsed.Set(maxSize / float64(m.cfg.EtcdQuotaBytes))
	}
	actx, cancel := context.WithTimeout(ctx, m.cfg.requestTimeout())
	alarms, err := m.cli.AlarmList(actx)
	cancel()
	if err != nil {
		m.m.etcdStatusFailures.Inc()
		return
	}
	counts := map[string]int{}
	for _, a := range alarms.Alarms {
		counts[a.Alarm.String()]++
	}
	for _, t := range []etcdserverpb.AlarmType{etcdserverpb.AlarmType_NOSPACE, etcdserverpb.AlarmType_CORRUPT} {
		m.m.etcdAlarms.WithLabelValues(t.String()).Set(float64(counts[t.String()]))
	}
}

// readHistory sets snapshot_stalled, the latest pointer's age and the
// uncompacted batch count on every node, the primary included: when no
// standby is left to snapshot, the primary is the one still reporting.
func (m *Master) readHistory(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.requestTimeout())
	defer cancel()
	o, err := publish.Observe(ctx, m.cli, m.ks)
	if err != nil {
		m.m.etcdStatusFailures.Inc()
		return
	}
	stalled, age := m.stalled(o, m.cursor(), time.Now())
	m.m.latestAge.Set(age.Seconds())
	m.m.snapshotStalled.Set(b2f(stalled))
	head, err := (&oplog.Reader{KV: m.cli, Keyspace: m.ks}).ReadHead(ctx)
	if err != nil {
		return
	}
	if floor, err := m.readFloor(ctx); err == nil {
		m.m.uncompacted.Set(float64(head.Prefix.BatchID - min(head.Prefix.BatchID, floor)))
	}
}

// stalled reports whether snapshots have stopped keeping up: the OpLog has
// moved past latest (or no latest exists while batches do) and latest is
// older than snapshot_stall_multiplier intervals.
func (m *Master) stalled(o publish.Observed, cur state.Cursor, now time.Time) (bool, time.Duration) {
	limit := time.Duration(float64(m.cfg.SnapshotIntervalSeconds)*m.cfg.SnapshotStallMultiplier*1000) * time.Millisecond
	if !o.Latest.Valid() {
		since := now.Sub(m.started)
		return cur.BatchID > 0 && since > limit, since
	}
	age := now.Sub(time.UnixMilli(o.Latest.Pointer.CreatedAtMS))
	return cur.BatchID > o.Latest.Pointer.LastIncludedBatchID && age > limit, age
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
