package master

import (
	"context"
	"fmt"
	"math"
	"sync"
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
		h := m.growth.horizon(time.Now(), maxSize, float64(m.cfg.EtcdQuotaBytes))
		if h == time.Duration(math.MaxInt64) {
			m.m.horizon.Set(math.Inf(1))
		} else {
			m.m.horizon.Set(h.Seconds())
		}
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
	now := time.Now()
	stalled, age := m.stalled(o, m.cursor(), now)
	m.m.latestAge.Set(age.Seconds())
	m.m.snapshotStalled.Set(b2f(stalled))
	m.m.pointerInfo.Reset()
	for _, slot := range []struct {
		name string
		s    publish.Slot
	}{{"latest", o.Latest}, {"fallback", o.Fallback}} {
		valid, verified, batch, age := -1.0, -1.0, 0.0, 0.0
		switch {
		case slot.s.Valid():
			p := slot.s.Pointer
			valid, batch, age = 1, float64(p.LastIncludedBatchID), now.Sub(time.UnixMilli(p.CreatedAtMS)).Seconds()
			if ok, known := m.verified.Verdict(p.SnapshotID); known {
				verified = b2f(ok)
			}
			m.m.pointerInfo.WithLabelValues(slot.name, p.SnapshotID).Set(1)
		case slot.s.Present():
			valid = 0
		}
		m.m.pointerValid.WithLabelValues(slot.name).Set(valid)
		m.m.pointerVerified.WithLabelValues(slot.name).Set(verified)
		m.m.pointerBatch.WithLabelValues(slot.name).Set(batch)
		m.m.pointerAge.WithLabelValues(slot.name).Set(age)
	}
	head, err := (&oplog.Reader{KV: m.cli, Keyspace: m.ks}).ReadHead(ctx)
	if err != nil {
		return
	}
	m.m.uncompacted.Set(float64(head.Prefix.BatchID - min(head.Prefix.BatchID, o.Floor)))
}

// growth remembers the largest etcd member's size over the last minute, to
// estimate when the quota runs out at that rate (the capacity exhaustion
// horizon the RFC asks for; no backpressure acts on it).
type growth struct {
	mu      sync.Mutex
	samples []sizeSample
}

type sizeSample struct {
	at   time.Time
	size float64
}

// growthWindow is how far back the growth rate is measured.
const growthWindow = time.Minute

// horizon records size at now and returns the time until quota at the rate
// since the oldest sample in the window; +Inf when not growing.
func (g *growth) horizon(now time.Time, size, quota float64) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.samples = append(g.samples, sizeSample{now, size})
	for len(g.samples) > 1 && now.Sub(g.samples[0].at) > growthWindow {
		g.samples = g.samples[1:]
	}
	first := g.samples[0]
	dt := now.Sub(first.at).Seconds()
	if dt <= 0 || size <= first.size || quota <= 0 {
		return time.Duration(math.MaxInt64)
	}
	if size >= quota {
		return 0
	}
	rate := (size - first.size) / dt
	return time.Duration((quota - size) / rate * float64(time.Second))
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
