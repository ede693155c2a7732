package audit

import (
	"math"
	"slices"
	"strings"
)

// applierHold is a node's applier held at standbyBeforeApply: the runner's
// timeline has the hit, with etcd's revision once the hit was seen and the
// fault that armed it. The hold lasts until that fault's heal, or until the
// node's process ends (a node started again bootstraps past the hold).
// While held the node applies nothing, so its cursor is at or below the
// durable prefix at the hit's revision (bound, set by the caller's replay
// of etcd's history once it passes from).
type applierHold struct {
	node     string
	from, to int64  // the hit's revision, the heal's (MaxInt64: never healed)
	bound    uint64 // the durable prefix at from: at or above the node's cursor while held
	bounded  bool
}

// applierHolds are the run's applier holds, in the timeline's order.
func applierHolds(in *Input) []*applierHold {
	var holds []*applierHold
	for i, e := range in.Events {
		if e.Kind != "hit" || e.Name != standbyBeforeApply || e.EtcdRevision <= 0 || e.Detail == "" {
			continue
		}
		h := &applierHold{node: strings.Trim(e.Target, "[]"), from: e.EtcdRevision, to: math.MaxInt64}
		known := true
		for _, later := range in.Events[i+1:] {
			healed := later.Kind == "heal" && later.Name == "failpoint" && later.Detail == e.Detail
			if healed || slices.Contains(later.Ended, h.node) {
				// a hold that ended at a revision the harness could not
				// read has no known end: it counts for no window
				h.to, known = later.EtcdRevision, later.EtcdRevision > 0
				break
			}
		}
		if known {
			holds = append(holds, h)
		}
	}
	return holds
}

// bindHolds sets the bound of every hold whose hit revision the replay of
// etcd's history has just passed (rev, the next event's, is above it):
// prefix is the durable prefix's batch as of the revisions before rev.
func bindHolds(holds []*applierHold, rev int64, prefix uint64) {
	for _, h := range holds {
		if !h.bounded && rev > h.from {
			h.bound, h.bounded = prefix, true
		}
	}
}
