// Package swarm draws random scenarios from a seed (swarm testing, after
// Groce et al.): each run gets its own cluster shape, master configuration,
// traffic and a random subset of the fault menu, so that faults which mask
// one another in a fixed mix get runs without each other. A drawn scenario
// is an ordinary scenario: its bundle holds it whole, so `chaos replay`
// reruns exactly what was drawn, and `chaos shrink` can reduce it.
package swarm

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/traffic"
)

// shape is what the fault menu needs to know about the drawn cluster.
type shape struct {
	etcd, masters int
	snapshots     bool // standbys publish
	retention     bool // GC and pruning on
}

// move is one fault of the menu: its steps, fault first and heal (if any)
// after the waits that let it act.
type move struct {
	name  string
	ok    func(shape) bool
	steps func(r *rand.Rand, sh shape, as string) []scenario.Step
}

func always(shape) bool           { return true }
func threeEtcd(sh shape) bool     { return sh.etcd >= 3 }
func withSnapshots(sh shape) bool { return sh.snapshots }
func withRetention(sh shape) bool { return sh.retention }

func sleep(r *rand.Rand, lo, hi int) scenario.Step {
	ms := lo + r.IntN(hi-lo+1)
	return scenario.Step{Sleep: time.Duration(ms) * time.Millisecond}
}

func fault(as string, s faults.Spec) scenario.Step {
	return scenario.Step{Fault: &s, As: as}
}

func heal(as string) scenario.Step { return scenario.Step{Heal: as} }

func waitPrimary(excluding string) scenario.Step {
	return scenario.Step{Wait: &scenario.Wait{For: "primary", Excluding: excluding, Timeout: 60 * time.Second}}
}

// menu is every move the swarm may draw.
var menu = []move{
	{"kill-primary", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "kill", Target: "primary"}), waitPrimary(as), sleep(r, 500, 3000), heal(as)}
	}},
	{"kill-standby", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "kill", Target: "standby"}), sleep(r, 500, 4000), heal(as)}
	}},
	{"pause-standby", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "pause", Target: "standby"}), sleep(r, 500, 4000), heal(as)}
	}},
	{"restart-master", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "restart", Target: "master"}), sleep(r, 200, 2000)}
	}},
	{"crash-after-append", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "primary", Name: "primaryAfterAppend", Term: "1*panic"}), waitPrimary(as), heal(as)}
	}},
	{"crash-before-serve", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		// Armed on a standby: it fires at that node's next promotion, if any.
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "promoteBeforeServe", Term: "1*panic"}), sleep(r, 500, 3000), heal(as)}
	}},
	{"slow-apply", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		term := fmt.Sprintf("sleep(%d)", 50+r.IntN(400))
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "standbyBeforeApply", Term: term}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"partition-primary-from-etcd", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "link-down", Target: "primary", Link: "{target}.etcd-*"}), waitPrimary(as), sleep(r, 500, 3000), heal(as)}
	}},
	{"etcd-latency", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		lat := 20 + r.IntN(180)
		return []scenario.Step{fault(as, faults.Spec{Kind: "toxic", Link: "master-*.etcd-*", Toxic: "latency", Attrs: map[string]any{"latency": lat, "jitter": lat / 4}}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"kill-etcd-follower", threeEtcd, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "kill", Target: "etcd-follower"}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"kill-etcd-leader", threeEtcd, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "kill", Target: "etcd-leader"}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"etcd-peer-partition", threeEtcd, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		n := r.IntN(3)
		return []scenario.Step{fault(as, faults.Spec{Kind: "link-down", Link: fmt.Sprintf("etcd-%d.peer", n)}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"crash-before-cas", withSnapshots, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "snapshotBeforeCAS", Term: "1*panic"}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"promotion-during-capture", withSnapshots, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "snapshotAfterCopy", Term: "1*sleep(2500)"}), sleep(r, 200, 1500),
			fault(as+"-primary", faults.Spec{Kind: "kill", Target: "primary"}), waitPrimary(as + "-primary"), heal(as + "-primary"), heal(as)}
	}},
	{"s3-outage", withSnapshots, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "link-down", Link: "master-*.s3"}), sleep(r, 1000, 5000), heal(as)}
	}},
	{"s3-latency", withSnapshots, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		lat := 50 + r.IntN(300)
		return []scenario.Step{fault(as, faults.Spec{Kind: "toxic", Link: "master-*.s3", Toxic: "latency", Attrs: map[string]any{"latency": lat}}), sleep(r, 1000, 5000), heal(as)}
	}},
	{"corrupt-latest", withSnapshots, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "corrupt-pointer", Target: "latest"}), sleep(r, 500, 3000)}
	}},
	{"revoke-writer-lease", withSnapshots, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "revoke-lease"}), sleep(r, 500, 2000)}
	}},
	{"crash-after-gc", withRetention, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "maintainAfterGC", Term: "1*panic"}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"crash-after-floor", withRetention, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "maintainAfterFloor", Term: "1*panic"}), sleep(r, 1000, 4000), heal(as)}
	}},
}

// Moves names the whole menu, for listings.
func Moves() []string {
	out := make([]string, len(menu))
	for i, m := range menu {
		out[i] = m.name
	}
	return out
}

// Draw returns run i of the swarm seeded with seed. The same (seed, i)
// always draws the same scenario.
func Draw(seed int64, i int) (*scenario.Scenario, error) {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(i)+0x5a3a))
	sh := shape{etcd: []int{1, 3, 3}[r.IntN(3)], masters: 2 + r.IntN(2)}
	sh.snapshots = r.IntN(4) != 0
	sh.retention = sh.snapshots && r.IntN(2) == 0
	cfg := map[string]any{
		"oplog_poll_interval_ms": []int{10, 20, 50}[r.IntN(3)],
		"leader_lease_seconds":   2 + r.IntN(2),
	}
	s3 := ""
	if sh.snapshots {
		s3 = []string{"versitygw", "versitygw", "gofakes3"}[r.IntN(3)]
		cfg["enable_standby_snapshot"] = true
		cfg["snapshot_interval_seconds"] = 1 + r.IntN(2)
		cfg["snapshot_min_advance_batches"] = 1 + r.IntN(5)
		if sh.retention {
			cfg["enable_snapshot_gc"] = true
			cfg["enable_oplog_pruning"] = true
			cfg["snapshot_gc_grace_multiplier"] = 1 + float64(r.IntN(3))/2
		}
	}
	// The menu subset this run may draw from (swarm: each move is in or out).
	var allowed []move
	for _, m := range menu {
		if m.ok(sh) && r.IntN(2) == 0 {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) == 0 {
		allowed = append(allowed, menu[0])
	}
	var steps []scenario.Step
	steps = append(steps, scenario.Step{Wait: &scenario.Wait{For: "ops", Ops: 100 + r.IntN(200), Timeout: 60 * time.Second}})
	if sh.snapshots {
		steps = append(steps, scenario.Step{Wait: &scenario.Wait{For: "snapshots", Count: 1, Timeout: 60 * time.Second}})
	}
	var drawn []string
	for k, n := 0, 2+r.IntN(4); k < n; k++ {
		m := allowed[r.IntN(len(allowed))]
		as := fmt.Sprintf("f%d-%s", k+1, m.name)
		drawn = append(drawn, m.name)
		steps = append(steps, m.steps(r, sh, as)...)
		steps = append(steps, waitPrimary(""), scenario.Step{Wait: &scenario.Wait{For: "ops", Ops: 50, Timeout: 60 * time.Second}})
	}
	sources := []string{"empty", "oplog"}
	if sh.snapshots {
		sources = append(sources, "latest", "fallback")
	}
	if r.IntN(3) == 0 {
		steps = append(steps,
			scenario.Step{Wait: &scenario.Wait{For: "caught-up", Timeout: 60 * time.Second}},
			scenario.Step{Restart: &scenario.Restart{Target: "all-masters", Mode: []string{"cold", "crash"}[r.IntN(2)]}},
			waitPrimary(""),
			scenario.Step{Wait: &scenario.Wait{For: "ops", Ops: 50, Timeout: 60 * time.Second}})
		drawn = append(drawn, "restart-all")
	}
	steps = append(steps, scenario.Step{Wait: &scenario.Wait{For: "caught-up", Timeout: 60 * time.Second}})
	sc := &scenario.Scenario{
		Name:        fmt.Sprintf("swarm-%d-%03d", seed, i),
		Description: fmt.Sprintf("drawn by chaos swarm --seed %d (run %d): etcd %d, masters %d, snapshots %v, retention %v; moves %v", seed, i, sh.etcd, sh.masters, sh.snapshots, sh.retention, drawn),
		Tier:        "swarm",
		Seed:        int64(r.Uint32()) + 1,
		Timeout:     6 * time.Minute,
		Cluster:     scenario.Cluster{Etcd: sh.etcd, Masters: sh.masters, Config: cfg, S3: s3},
		Traffic:     traffic.Config{Clients: 2 + r.IntN(5), Rate: float64(100 + 50*r.IntN(7)), MaxOps: 30000, Duration: 4 * time.Minute},
		Steps:       steps,
		Expect:      audit.Expect{RecoverySource: sources, MinOKOps: 100, MinPromotions: 1},
	}
	// Round-trip through the loader: a drawn scenario obeys every rule a
	// written one does, and gets its step line numbers.
	data, err := sc.Marshal()
	if err != nil {
		return nil, err
	}
	out, err := scenario.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("drawn scenario %s does not load: %w", sc.Name, err)
	}
	return out, nil
}
