package audit

import (
	"fmt"
	"math"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// A stretch is a span of etcd's history, revisions [from, to), placed in
// time by the retention samples that read a revision inside it: it lasted
// at least Least, the time between the first and the last of them (a
// bound that is never too long; 0 when fewer than two samples fell in it).
type stretch struct {
	what     string
	from, to int64 // to: math.MaxInt64 while it had not ended
	least    time.Duration
	at       int64 // the first sample's time in it
}

func (s stretch) String() string {
	to := "the end of the run"
	if s.to != math.MaxInt64 {
		to = fmt.Sprintf("rev %d", s.to)
	}
	return fmt.Sprintf("%s, from rev %d to %s (at least %.1fs, from %s)", s.what, s.from, to, s.least.Seconds(), seconds(s.at))
}

// placeInTime sets each stretch's least duration from the samples.
func placeInTime(ss []stretch, samples []RetentionSample) {
	for i := range ss {
		first, last := int64(-1), int64(-1)
		for _, x := range samples {
			if x.Rev <= 0 || x.Rev < ss[i].from || x.Rev >= ss[i].to {
				continue
			}
			if first < 0 {
				first = x.At
			}
			last = x.At
		}
		if first >= 0 {
			ss[i].least, ss[i].at = time.Duration(last-first), first
		}
	}
}

// maintenanceHolds are the tenures of the maintenance key: from a lease's
// first put of it to its delete or another lease's put.
func maintenanceHolds(in *Input, ks keyspace.Keyspace) []stretch {
	var out []stretch
	holder := int64(0)
	for _, e := range etcdByRevision(in) {
		if e.Key != ks.SnapshotMaintenance() {
			continue
		}
		lease := e.Lease
		if _, l, ok := parseToken(string(e.Value)); ok {
			lease = l
		}
		if e.Type == "put" && holder != 0 && lease == holder {
			continue // the holder renewing its own value
		}
		if holder != 0 {
			out[len(out)-1].to = e.Revision
			holder = 0
		}
		if e.Type == "put" {
			holder = lease
			out = append(out, stretch{what: fmt.Sprintf("maintenance key held by lease %x", lease), from: e.Revision, to: math.MaxInt64})
		}
	}
	placeInTime(out, in.Retention)
	return out
}

// latestStill are the spans between consecutive writes of latest that
// changed it (a publication or a repair), the last one ended by none.
func latestStill(in *Input, ks keyspace.Keyspace) []stretch {
	var out []stretch
	prev := ""
	for _, e := range etcdByRevision(in) {
		if e.Key != ks.SnapshotLatest() || e.Type != "put" || string(e.Value) == prev {
			continue
		}
		prev = string(e.Value)
		if len(out) > 0 {
			out[len(out)-1].to = e.Revision
		}
		out = append(out, stretch{what: "latest unchanged", from: e.Revision, to: math.MaxInt64})
	}
	placeInTime(out, in.Retention)
	return out
}

// longest is the stretch with the longest least duration among those
// that ended (every one when all is set).
func longest(ss []stretch, all bool) (stretch, bool) {
	var best stretch
	found := false
	for _, s := range ss {
		if (!all && s.to == math.MaxInt64) || (found && s.least <= best.least) {
			continue
		}
		best, found = s, true
	}
	return best, found
}
