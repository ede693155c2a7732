package audit

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// RetentionSample is one reading of what the cluster retains: the OpLog in
// etcd, the snapshot groups in the store and etcd's database size. The
// runner takes one a second; retention-bounds reads their maxima.
type RetentionSample struct {
	At int64 `json:"t_ns"` // since the run's start
	// Rev is etcd's revision the sample read (0: unknown, as in bundles
	// from before it was kept): it places etcd's history in time.
	Rev       int64  `json:"etcd_rev,omitempty"`
	Floor     uint64 `json:"floor"`
	Prefix    uint64 `json:"durable_prefix"`
	BatchKeys int    `json:"batch_keys"`
	Groups    int    `json:"snapshot_groups"` // -1: the run has no snapshot store
	DBSize    int64  `json:"etcd_db_size"`    // largest member
	DBInUse   int64  `json:"etcd_db_size_in_use"`
	// MissingTargets are pointers ("latest ID") that stayed unchanged across
	// the sample's listing of the store while their snapshot was not in it.
	MissingTargets []string `json:"missing_targets,omitempty"`
}

// RetentionMax is the largest value of each sampled series.
type RetentionMax struct {
	BatchKeys, Groups int
	DBSize, DBInUse   int64
	Samples           int
}

// MaxRetention folds the samples.
func MaxRetention(ss []RetentionSample) RetentionMax {
	m := RetentionMax{Samples: len(ss)}
	for _, s := range ss {
		m.BatchKeys, m.Groups = max(m.BatchKeys, s.BatchKeys), max(m.Groups, s.Groups)
		m.DBSize, m.DBInUse = max(m.DBSize, s.DBSize), max(m.DBInUse, s.DBInUse)
	}
	return m
}

// RetentionBounds checks that the OpLog and the snapshot groups stayed
// within the scenario's bounds over the whole run (max_batch_keys,
// max_snapshot_groups), that no lease held the maintenance key longer than
// max_maintenance_hold and latest never stood still longer than
// max_publication_gap between two publications; without bounds it reports
// the maxima.
func RetentionBounds(in *Input) Result {
	if len(in.Retention) == 0 {
		return Result{Pass: true, Summary: "no retention samples (nothing to bound)"}
	}
	m := MaxRetention(in.Retention)
	var ev evidence
	if b := in.Expect.MaxBatchKeys; b > 0 && m.BatchKeys > b {
		ev.add("%d batch keys at the peak, bound %d (%s)", m.BatchKeys, b, peakAt(in.Retention, func(s RetentionSample) int { return s.BatchKeys }))
	}
	if b := in.Expect.MaxSnapshotGroups; b > 0 && m.Groups > b {
		ev.add("%d snapshot groups at the peak, bound %d (%s)", m.Groups, b, peakAt(in.Retention, func(s RetentionSample) int { return s.Groups }))
	}
	summary := fmt.Sprintf("%d samples: at most %d batch keys", m.Samples, m.BatchKeys)
	if in.Expect.MaxBatchKeys > 0 {
		summary += fmt.Sprintf(" (bound %d)", in.Expect.MaxBatchKeys)
	}
	if m.Groups >= 0 {
		summary += fmt.Sprintf(", %d snapshot groups", m.Groups)
		if in.Expect.MaxSnapshotGroups > 0 {
			summary += fmt.Sprintf(" (bound %d)", in.Expect.MaxSnapshotGroups)
		}
	}
	summary += fmt.Sprintf(", etcd db %.1f MiB", float64(m.DBSize)/(1<<20))
	// How long a maintenance lease held the key, and how long latest stood
	// still between publications: etcd's history placed in time by the
	// samples' revisions.
	if ks, err := keyspace.New(in.ClusterID); err == nil {
		if h, ok := longest(maintenanceHolds(in, ks), true); ok {
			summary += fmt.Sprintf("; longest maintenance hold at least %.1fs", h.least.Seconds())
			if b := in.Expect.MaxMaintenanceHold; b > 0 && h.least > b {
				ev.add("%s: longer than the bound %v (max_maintenance_hold): nothing else could publish, repair or prune meanwhile", h, b)
			}
		}
		if g, ok := longest(latestStill(in, ks), false); ok {
			summary += fmt.Sprintf("; latest stood still at least %.1fs between publications", g.least.Seconds())
			if b := in.Expect.MaxPublicationGap; b > 0 && g.least > b {
				ev.add("%s: longer than the bound %v between publications (max_publication_gap)", g, b)
			}
		}
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list()}
}

func peakAt(ss []RetentionSample, f func(RetentionSample) int) string {
	best := 0
	for i, s := range ss {
		if f(s) > f(ss[best]) {
			best = i
		}
	}
	s := ss[best]
	return fmt.Sprintf("at %.1fs: floor %d, durable prefix %d", float64(s.At)/1e9, s.Floor, s.Prefix)
}
