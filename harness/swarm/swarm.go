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
	"path"
	"slices"
	"strings"
	"time"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/traffic"
)

// shape is what the fault menu needs to know about the drawn cluster: the
// fault registry's Shape.
type shape = faults.Shape

// move is one entry of the menu: its steps, fault first and heal (if any)
// after the waits that let it act.
type move struct {
	name  string
	ok    func(shape) bool
	steps func(r *rand.Rand, sh shape, as string) []scenario.Step
}

// needsBeyondSteps are the capabilities a move relies on beyond what its
// steps imply (scenario.Requires reads those): long-replay's 3 pages are
// pages of the reader's page size, which the run draws through the
// project's config keys.
var needsBeyondSteps = map[string][]masterkind.Capability{"long-replay": {masterkind.ProjectConfig}}

// aimedAt names the window of each move aimed at one under another name
// (a second way into it); a run that draws the move expects the window.
var aimedAt = map[string]string{"promotion-catch-up": "long-replay", "zombie-append": "zombie-primary"}

// windowOf is the window a move is aimed at, if any: aimedAt's, or its
// name.
func windowOf(m move) string {
	if w, ok := aimedAt[m.name]; ok {
		return w
	}
	return m.name
}

func always(shape) bool           { return true }
func withSnapshots(sh shape) bool { return sh.Snapshots }
func withRetention(sh shape) bool { return sh.Retention }
func withQuorum(sh shape) bool    { return sh.Etcd >= 3 }

func sleep(r *rand.Rand, lo, hi int) scenario.Step {
	ms := lo + r.IntN(hi-lo+1)
	return scenario.Step{Sleep: time.Duration(ms) * time.Millisecond}
}

func fault(as string, s faults.Spec) scenario.Step {
	return scenario.Step{Fault: &s, As: as}
}

func heal(as string) scenario.Step { return scenario.Step{Heal: as} }

func waitFailpoint(as string) scenario.Step {
	return scenario.Step{Wait: &scenario.Wait{For: "failpoint", Node: as, Timeout: 60 * time.Second}}
}

// waitStandby waits until the master a fault took down is a standby
// again (restarted and bootstrapped): a later move may need it.
func waitStandby(as string) scenario.Step {
	return scenario.Step{Wait: &scenario.Wait{For: "role", Node: as, Role: "standby", Timeout: 60 * time.Second}}
}

func waitPrimary(excluding string) scenario.Step {
	return scenario.Step{Wait: &scenario.Wait{For: "primary", Excluding: excluding, Timeout: 60 * time.Second}}
}

// readPageSizes are the OpLog reader page sizes a swarm run's masters
// draw: small, so that every replay spans pages; longReplayBatches is 3
// pages of the largest.
var readPageSizes = []int{8, 16}

const longReplayBatches = 3 * 16

// drawnInterval stands for the run's drawn snapshot interval in a move's
// restart config: Draw puts the drawn value in its place.
const drawnInterval = -1

// windows are the moves aimed at one crash window each: a failpoint armed
// by name where it is reached, alone or with the fault that makes the
// window matter.
var windows = []move{
	{"crash-after-append", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "primary", Name: "primaryAfterAppend", Term: "1*panic"}), waitPrimary(as), heal(as)}
	}},
	{"crash-before-serve", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		// Armed on a standby: it fires at that node's next promotion, if any.
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "promoteBeforeServe", Term: "1*panic"}),
			sleep(r, 500, 3000), heal(as)}
	}},
	{"slow-apply", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		term := fmt.Sprintf("sleep(%d)", 50+r.IntN(400))
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "standbyBeforeApply", Term: term}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"crash-before-cas", withSnapshots, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "snapshotBeforeCAS", Term: "1*panic"}),
			sleep(r, 1000, 4000), heal(as)}
	}},
	{"promotion-during-capture", withSnapshots, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "snapshotAfterCopy", Term: "1*sleep(2500)"}), sleep(r, 200, 1500),
			fault(as+"-primary", faults.Spec{Kind: "kill", Target: "primary"}), waitPrimary(as + "-primary"), heal(as + "-primary"), heal(as)}
	}},
	{"crash-after-gc", withRetention, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "maintainAfterGC", Term: "1*panic"}), sleep(r, 1000, 4000), heal(as)}
	}},
	{"long-replay", always, func(r *rand.Rand, sh shape, as string) []scenario.Step {
		// Window long-replay: every master crashes with the durable prefix
		// 3 pages of the largest drawn page size above the newest pointer;
		// with snapshots, publication is stopped by a rollout until then
		// and resumes at the drawn interval after.
		suffix := scenario.Step{Wait: &scenario.Wait{For: "suffix", Batches: longReplayBatches, Timeout: 60 * time.Second}}
		if !sh.Snapshots {
			return []scenario.Step{suffix, scenario.Step{Restart: &scenario.Restart{Target: "all-masters", Mode: "crash"}}}
		}
		return []scenario.Step{
			{Restart: &scenario.Restart{Target: "all-masters", Mode: "cold", Config: map[string]any{"snapshot_interval_seconds": 3600}}},
			waitPrimary(""), suffix,
			{Restart: &scenario.Restart{Target: "all-masters", Mode: "crash", Config: map[string]any{"snapshot_interval_seconds": drawnInterval}}},
		}
	}},

	{"deposed-reads", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		// Window deposed-reads: the primary cut off from etcd and held
		// before it steps down; a probe writes at its successor and reads
		// at it.
		return []scenario.Step{
			fault(as, faults.Spec{Kind: "failpoint", Target: "primary", Name: "primaryBeforeStepDown", Term: `1*return("hold")`}),
			fault(as+"-cut", faults.Spec{Kind: "link-down", Target: as, Link: "{target}.etcd-*"}),
			waitFailpoint(as), waitPrimary(as),
			{Probe: &scenario.Probe{Node: as, Keys: 1 + r.IntN(5)}},
			heal(as + "-cut"), heal(as),
		}
	}},
	{"foreign-batch-at-id", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		// Window foreign-batch-at-id: an append sent over cut links, held
		// before its read-back until a successor has acknowledged from its
		// batch id on.
		return []scenario.Step{
			fault(as, faults.Spec{Kind: "failpoint", Target: "primary", Name: "primaryAppendUnknown", Term: `1*return("hold")`}),
			fault(as+"-held", faults.Spec{Kind: "failpoint", Target: as, Name: "primaryBeforeAppend", Term: `1*return("hold")`}),
			waitFailpoint(as + "-held"),
			fault(as+"-cut", faults.Spec{Kind: "link-down", Target: as, Link: "{target}.etcd-*"}),
			heal(as + "-held"), waitFailpoint(as), waitPrimary(as),
			{Probe: &scenario.Probe{Node: as, Keys: 1 + r.IntN(3)}},
			heal(as + "-cut"), heal(as),
		}
	}},
	{"promotion-catch-up", func(sh shape) bool { return !sh.Retention }, func(r *rand.Rand, sh shape, as string) []scenario.Step {
		// Window long-replay, a promotion's catch-up: a standby's applier
		// held while the prefix moves 3 of the largest drawn pages past it,
		// every other master killed, the held standby elected while still
		// held, then released. Without retention: a held standby the floor
		// passed could never be elected.
		steps := []scenario.Step{
			fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "standbyBeforeApply", Term: `1*return("hold")`}),
			waitFailpoint(as),
			{Wait: &scenario.Wait{For: "suffix", Above: as, Batches: longReplayBatches, Timeout: 60 * time.Second}},
		}
		if sh.Masters > 2 {
			steps = append(steps, fault(as+"-other", faults.Spec{Kind: "kill", Target: "standby", Excluding: as}))
		}
		steps = append(steps, fault(as+"-old", faults.Spec{Kind: "kill", Target: "primary"}),
			scenario.Step{Wait: &scenario.Wait{For: "leader", Node: as, Timeout: 60 * time.Second}},
			heal(as), waitPrimary(as+"-old"), heal(as+"-old"), waitStandby(as+"-old"))
		if sh.Masters > 2 {
			steps = append(steps, heal(as+"-other"), waitStandby(as+"-other"))
		}
		return steps
	}},
	{"stale-publisher", func(sh shape) bool { return sh.Snapshots && sh.Masters >= 3 }, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		// Window stale-publisher: a standby admitted, its applier frozen,
		// the other publishing past it and then held, the stale one let
		// take the lease.
		return []scenario.Step{
			fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "snapshotBeforeLease", Term: `1*return("hold")`}),
			waitFailpoint(as),
			fault(as+"-frozen", faults.Spec{Kind: "failpoint", Target: as, Name: "standbyBeforeApply", Term: `1*return("hold")`}),
			waitFailpoint(as + "-frozen"),
			{Wait: &scenario.Wait{For: "snapshots", Count: 2, Timeout: 60 * time.Second}},
			fault(as+"-other", faults.Spec{Kind: "failpoint", Target: "standby", Excluding: as, Name: "snapshotBeforeLease", Term: `1*return("hold")`}),
			waitFailpoint(as + "-other"),
			heal(as), {Wait: &scenario.Wait{For: "maintenance", Node: as, Timeout: 60 * time.Second}},
			heal(as + "-frozen"), heal(as + "-other"),
		}
	}},
	{"crash-before-append", always, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		// Window crash-before-append: the primary is held with a batch
		// built and its append not sent, and killed there: what it took
		// from clients was never acknowledged. A hold and a kill, not a
		// panic, so the runner sees the hold and the window is counted.
		kill := as + "-kill"
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "primary", Name: "primaryBeforeAppend", Term: `1*return("hold")`}),
			waitFailpoint(as), fault(kill, faults.Spec{Kind: "kill", Target: as}), waitPrimary(kill), heal(kill), waitStandby(kill), heal(as)}
	}},
	{"zombie-append", always, func(r *rand.Rand, sh shape, as string) []scenario.Step {
		// Window zombie-primary: the primary holds a built batch before
		// its append, is paused past its lease while another takes over
		// (held before its own first append: else the successor appends
		// first and the window is not reached), and is resumed and
		// released into the append it held.
		steps := []scenario.Step{
			fault(as, faults.Spec{Kind: "failpoint", Target: "primary", Name: "primaryBeforeAppend", Term: `1*return("hold")`}),
			waitFailpoint(as),
		}
		var held []string
		for k := 1; k < sh.Masters; k++ {
			name := fmt.Sprintf("%s-next%d", as, k)
			spec := faults.Spec{Kind: "failpoint", Target: "standby", Name: "primaryBeforeAppend", Term: `1*return("hold")`}
			if len(held) > 0 {
				spec.Excluding = held[len(held)-1]
			}
			steps = append(steps, fault(name, spec))
			held = append(held, name)
		}
		steps = append(steps, fault(as+"-zombie", faults.Spec{Kind: "pause", Target: as}), waitPrimary(as+"-zombie"),
			sleep(r, 0, 1000), heal(as+"-zombie"), heal(as),
			scenario.Step{Wait: &scenario.Wait{For: "role", Node: as, Role: "up", Timeout: 60 * time.Second}})
		for _, h := range held {
			steps = append(steps, heal(h))
		}
		return steps
	}},
	{"quorum-loss", withQuorum, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		// etcd loses its quorum under load: two of three members frozen or
		// killed until no master serves, the masters crash-restarted into
		// the outage half the time, then healed.
		kind := []string{"pause", "kill"}[r.IntN(2)]
		steps := []scenario.Step{
			fault(as+"-a", faults.Spec{Kind: kind, Target: "etcd-follower"}),
			fault(as+"-b", faults.Spec{Kind: kind, Target: "etcd", Excluding: as + "-a"}),
			{Wait: &scenario.Wait{For: "no-primary", Timeout: 30 * time.Second}},
		}
		if r.IntN(2) == 0 {
			steps = append(steps, scenario.Step{Restart: &scenario.Restart{Target: "all-masters", Mode: "crash"}})
		}
		return append(steps, sleep(r, 0, 2000), heal(as+"-b"), heal(as+"-a"), waitPrimary(""))
	}},
	{"crash-after-floor", withRetention, func(r *rand.Rand, _ shape, as string) []scenario.Step {
		return []scenario.Step{fault(as, faults.Spec{Kind: "failpoint", Target: "standby", Name: "maintainAfterFloor", Term: "1*panic"}),
			sleep(r, 1000, 4000), heal(as)}
	}},
}

// menu is every move the swarm may draw: one per fault kind the registry
// draws (a kind joins by being registered), and the window moves.
var menu = append(kindMoves(), windows...)

// kindMoves is a move per registered kind with a draw: the drawn spec,
// then, for a kind that takes its target out of service, a wait for a
// primary elsewhere when it hit the primary, and the heal after a while
// (or, for damage only publications repair, a wait for them).
func kindMoves() []move {
	var out []move
	for _, k := range faults.Kinds() {
		if k.NotDrawn != "" {
			continue
		}
		out = append(out, move{
			name: k.Name,
			ok:   func(sh shape) bool { return k.Available(sh) == nil },
			steps: func(r *rand.Rand, sh shape, as string) []scenario.Step {
				spec, _ := k.Draw(r, sh)
				steps := []scenario.Step{fault(as, spec)}
				if k.Outage && spec.Target == "primary" {
					steps = append(steps, waitPrimary(as))
				}
				switch {
				case k.Heals:
					steps = append(steps, sleep(r, 500, 4000), heal(as))
				case k.Publications > 0:
					// The run ends judging both pointers: let publications
					// carry the damage out of them.
					steps = append(steps, scenario.Step{Wait: &scenario.Wait{For: "snapshots", Count: k.Publications, Timeout: 60 * time.Second}})
				default:
					steps = append(steps, sleep(r, 200, 2000))
				}
				return steps
			},
		})
	}
	return out
}

// Moves names the whole menu, for listings.
func Moves() []string {
	out := make([]string, len(menu))
	for i, m := range menu {
		out[i] = m.name
	}
	return out
}

// Draw returns run i of the swarm seeded with seed, for the reference
// master. The same (seed, i) always draws the same scenario.
func Draw(seed int64, i int) (*scenario.Scenario, error) {
	return DrawFor(seed, i, masterkind.Reference())
}

// supervised fits a run's steps to masters under a supervisor: a node
// whose process a fault ended (a kill, stop or restart) is restarted by its
// supervisor at once and may win the election again, so a wait for a primary other than it waits for any
// primary, and a wait for it to be a standby again waits for it to be up
// in either role (as scenarios/upstream/supervised-restarts does).
func supervised(steps []scenario.Step) []scenario.Step {
	ends := map[string]bool{}
	for _, st := range steps {
		if f := st.Fault; f != nil && st.As != "" {
			if f.Kind == "kill" || f.Kind == "stop" || f.Kind == "restart" {
				ends[st.As] = true
			}
		}
	}
	out := make([]scenario.Step, len(steps))
	for i, st := range steps {
		if w := st.Wait; w != nil && (ends[w.Excluding] || (w.For == "role" && ends[w.Node] && w.Role == "standby")) {
			cp := *w
			if cp.For == "role" {
				cp.Role = "up"
			} else {
				cp.Excluding = ""
			}
			st.Wait = &cp
		}
		out[i] = st
	}
	return out
}

// untilBackUp ends a move with every master it ended back up (primary or
// standby): a master killed, stopped, restarted or crashed at a failpoint
// is started again by its heal (or at once), and the next move may aim at
// a role only it can fill — with two masters, "standby" names no node while
// the restarted one is still starting, and the run fails with "fault not
// available" for want of a wait (swarm seed 50, runs 20 and 32). A master
// the move already waits for is left as it is; etcd members are not
// masters; a restart of every master waits for each by name.
func untilBackUp(sh shape, steps []scenario.Step) []scenario.Step {
	waited := map[string]bool{}
	var ended []string
	for _, st := range steps {
		if w := st.Wait; w != nil && w.For == "role" && (w.Role == "up" || w.Role == "standby") {
			waited[w.Node] = true
		}
		if rs := st.Restart; rs != nil && rs.Target == "all-masters" {
			for i := range sh.Masters {
				ended = append(ended, fmt.Sprintf("master-%d", i))
			}
		}
		if f := st.Fault; f != nil && st.As != "" && !strings.HasPrefix(f.Target, "etcd") && f.EndsProcess() {
			ended = append(ended, st.As)
		}
	}
	out := slices.Clone(steps)
	for _, node := range ended {
		if !waited[node] {
			waited[node] = true
			out = append(out, scenario.Step{Wait: &scenario.Wait{For: "role", Node: node, Role: "up", Timeout: 60 * time.Second}})
		}
	}
	return out
}

// crashesAtFailpoint says whether a move crashes a node at a failpoint (a
// panic term), in any of its probes.
func crashesAtFailpoint(m move, sh shape) bool {
	for _, steps := range probes(m, sh) {
		for _, st := range steps {
			if f := st.Fault; f != nil && f.Kind == "failpoint" && masterkind.TermForm(f.Term) == "panic" {
				return true
			}
		}
	}
	return false
}

// Menu is the moves a swarm for master kind k draws from, by name: every
// move whose steps, on some cluster, need nothing k lacks.
func Menu(k masterkind.Kind) []string {
	var out []string
	for _, m := range menu {
		for _, sh := range shapesFor(k) {
			if m.ok(sh) && canTake(k, m, sh) {
				out = append(out, m.name)
				break
			}
		}
	}
	return out
}

// shapesFor are the cluster shapes a swarm for k draws.
func shapesFor(k masterkind.Kind) []shape {
	var out []shape
	for _, etcd := range []int{1, 3} {
		for _, masters := range []int{2, 3} {
			out = append(out, shape{Etcd: etcd, Masters: masters, PeerPairs: true})
			if k.Can(masterkind.Snapshots) {
				out = append(out, shape{Etcd: etcd, Masters: masters, Snapshots: true, StoreFiles: true, PeerPairs: true},
					shape{Etcd: etcd, Masters: masters, Snapshots: true, Retention: true, StoreFiles: true, PeerPairs: true})
			}
		}
	}
	return out
}

// canTake says whether k can take move m on a cluster of shape sh: what
// the move's steps imply (drawn a few times: a step may depend on the
// draw) and what it needs beyond them.
func canTake(k masterkind.Kind, m move, sh shape) bool {
	if len(k.Missing(needsBeyondSteps[m.name])) > 0 {
		return false
	}
	for _, steps := range probes(m, sh) {
		sc := scenario.Scenario{Steps: steps}
		if len(k.Missing(sc.Requires())) > 0 {
			return false
		}
	}
	return true
}

// probes are a move's steps drawn a few times with fixed seeds: a step may
// depend on the draw.
func probes(m move, sh shape) [][]scenario.Step {
	out := make([][]scenario.Step, 8)
	for i := range out {
		out[i] = m.steps(rand.New(rand.NewPCG(uint64(i), 0x9e37)), sh, "probe")
	}
	return out
}

// DrawFor returns run i of the swarm seeded with seed for master kind k:
// a cluster, configuration, load and moves that k can take. The same
// (seed, i, k) always draws the same scenario.
func DrawFor(seed int64, i int, k masterkind.Kind) (*scenario.Scenario, error) {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(i)+0x5a3a))
	// Swarm runs are on the process runtime, with plain peer links: etcd
	// members can be cut apart pair by pair.
	sh := shape{Etcd: []int{1, 3, 3}[r.IntN(3)], Masters: 2 + r.IntN(2), PeerPairs: true}
	sh.Snapshots = k.Can(masterkind.Snapshots) && r.IntN(4) != 0
	sh.Retention = sh.Snapshots && r.IntN(2) == 0
	var cfg map[string]any
	s3 := ""
	if k.Can(masterkind.ProjectConfig) {
		cfg = map[string]any{
			"oplog_poll_interval_ms": []int{10, 20, 50}[r.IntN(3)],
			"leader_lease_seconds":   2 + r.IntN(2),
		}
		if sh.Snapshots {
			s3 = []string{"versitygw", "versitygw", "gofakes3"}[r.IntN(3)]
			cfg["enable_standby_snapshot"] = true
			cfg["snapshot_interval_seconds"] = 1 + r.IntN(2)
			cfg["snapshot_min_advance_batches"] = 1 + r.IntN(5)
			if sh.Retention {
				cfg["enable_snapshot_gc"] = true
				cfg["enable_oplog_pruning"] = true
				cfg["snapshot_gc_grace_multiplier"] = 1 + float64(r.IntN(3))/2
			}
		}
		cfg["oplog_read_page_size"] = readPageSizes[r.IntN(len(readPageSizes))]
	} else if sh.Snapshots {
		// A master that publishes snapshots but takes no project keys:
		// the store alone, with the master's own defaults.
		s3 = "versitygw"
	}
	// The store's files are reachable behind versitygw only. Mount rights
	// depend on the machine, and a draw must not: workdir-full stays with
	// its pr scenario.
	sh.StoreFiles = s3 == "versitygw"
	// Some clusters start from an upstream legacy snapshot (an explicit
	// import by every master): the faults then act on an imported history.
	var legacy *scenario.LegacyImport
	if sh.Snapshots && k.Can(masterkind.LegacyImport) && r.IntN(5) == 0 {
		fixture := []string{"small", "zero-cursor", "empty", "offloaded"}[r.IntN(4)]
		legacy = &scenario.LegacyImport{Root: "fixtures/legacy/" + fixture, ClusterID: "mooncake_cluster"}
	}
	// Some clusters run every master under a supervisor that restarts it
	// when it exits, as systemd would: a kill is then also a restart race.
	var supervisor *scenario.Supervisor
	if r.IntN(4) == 0 {
		supervisor = &scenario.Supervisor{Restart: "always", Backoff: time.Duration(200+100*r.IntN(9)) * time.Millisecond}
	}
	// The menu subset this run may draw from (swarm: each move is in or out).
	// Under a supervisor a node that crashes at a failpoint is back before
	// any wait can tell it crashed (and may win the election again): the
	// crash windows are drawn in runs without one.
	fits := func(m move) bool {
		return m.ok(sh) && canTake(k, m, sh) && (supervisor == nil || !crashesAtFailpoint(m, sh))
	}
	var allowed []move
	for _, m := range menu {
		if fits(m) && r.IntN(2) == 0 {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) == 0 {
		for _, m := range menu {
			if fits(m) {
				allowed = append(allowed, m)
				break
			}
		}
	}
	// settled: a wait until every master has applied the durable prefix,
	// where the kind says its cursor; else none (the run's settle waits
	// for etcd's durable prefix to stay still).
	settled := func() []scenario.Step {
		if !k.Can(masterkind.Cursor) {
			return nil
		}
		return []scenario.Step{{Wait: &scenario.Wait{For: "caught-up", Timeout: 60 * time.Second}}}
	}
	var steps []scenario.Step
	steps = append(steps, scenario.Step{Wait: &scenario.Wait{For: "ops", Ops: 100 + r.IntN(200), Timeout: 60 * time.Second}})
	if sh.Snapshots {
		steps = append(steps, scenario.Step{Wait: &scenario.Wait{For: "snapshots", Count: 1, Timeout: 60 * time.Second}})
	}
	var drawn, expectWindows []string
	for n, j := 2+r.IntN(4), 0; j < n; j++ {
		m := allowed[r.IntN(len(allowed))]
		as := fmt.Sprintf("f%d-%s", j+1, m.name)
		drawn = append(drawn, m.name)
		if w, ok := audit.WindowByID(windowOf(m)); ok && w.Count != nil && !slices.Contains(expectWindows, w.ID) {
			// A move aimed at a window must reach it: minimum-work fails the run that did not.
			expectWindows = append(expectWindows, w.ID)
		}
		steps = append(steps, untilBackUp(sh, m.steps(r, sh, as))...)
		steps = append(steps, waitPrimary(""), scenario.Step{Wait: &scenario.Wait{For: "ops", Ops: 50, Timeout: 60 * time.Second}})
	}
	sources := []string{"empty", "oplog"}
	if sh.Snapshots {
		sources = append(sources, "latest", "fallback")
	}
	if legacy != nil {
		drawn = append(drawn, "legacy-import-"+path.Base(legacy.Root))
	}
	if supervisor != nil {
		drawn = append(drawn, "supervised")
	}
	if r.IntN(3) == 0 {
		steps = append(steps, settled()...)
		steps = append(steps, untilBackUp(sh, []scenario.Step{
			{Restart: &scenario.Restart{Target: "all-masters", Mode: []string{"cold", "crash"}[r.IntN(2)]}},
			waitPrimary(""),
		})...)
		steps = append(steps, scenario.Step{Wait: &scenario.Wait{For: "ops", Ops: 50, Timeout: 60 * time.Second}})
		drawn = append(drawn, "restart-all")
	}
	steps = append(steps, settled()...)
	if supervisor != nil {
		steps = supervised(steps)
	}
	for _, st := range steps {
		if st.Restart != nil && st.Restart.Config["snapshot_interval_seconds"] == drawnInterval {
			st.Restart.Config["snapshot_interval_seconds"] = cfg["snapshot_interval_seconds"]
		}
	}
	kindNote := ""
	if k.Name != masterkind.ReferenceName {
		kindNote = fmt.Sprintf(" --moves-of %s", k.Name)
	}
	sc := &scenario.Scenario{
		Name: fmt.Sprintf("swarm-%d-%03d", seed, i),
		Description: fmt.Sprintf("drawn by chaos swarm --seed %d%s (run %d): etcd %d, masters %d, snapshots %v, retention %v; moves %v", seed, kindNote, i,
			sh.Etcd, sh.Masters, sh.Snapshots, sh.Retention, drawn),
		Tier:    "swarm",
		Seed:    int64(r.Uint32()) + 1,
		Timeout: 6 * time.Minute,
		Cluster: scenario.Cluster{Etcd: sh.Etcd, Masters: sh.Masters, Config: cfg, S3: s3, LegacyImport: legacy, Supervisor: supervisor},
		Traffic: traffic.Config{Clients: 2 + r.IntN(5), Rate: float64(100 + 50*r.IntN(7)), MaxOps: 30000, Duration: 4 * time.Minute},
		Steps:   steps,
		Expect:  audit.Expect{RecoverySource: sources, MinOKOps: 100, MinPromotions: 1, Windows: expectWindows},
	}
	if miss := k.Missing(sc.Requires()); len(miss) > 0 {
		return nil, fmt.Errorf("drawn scenario %s needs %v, which master %s lacks", sc.Name, miss, k.Name)
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
