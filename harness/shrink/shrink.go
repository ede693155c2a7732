// Package shrink reduces a failing scenario to a smaller one that still
// fails: greedy one-at-a-time removal over "units" — a fault together with
// every later step that names it (its heal, waits excluding it), or a lone
// wait, sleep, restart or assert — repeated until no single removal keeps
// the failure, then the traffic rate and cluster are tried smaller. A
// scenario the swarm drew is first shrunk a whole move at a time (the steps
// of one drawn move, named f<N>-…, with the waits that follow it), so a
// draw of five moves needs at most five runs to find the moves that
// matter. Every candidate is an ordinary scenario that loads; the
// caller's Try runs it.
package shrink

import (
	"context"
	"fmt"
	"slices"

	"github.com/oplogha/oplogha/harness/scenario"
)

// Try runs a candidate and reports whether it still fails. origin[i] is
// the 1-based index, in the scenario Shrink started from, of the
// candidate's step i, so a caller can aim each remaining fault at the
// event its original landed on (a replay's anchors).
type Try func(ctx context.Context, sc *scenario.Scenario, origin []int) (fails bool, err error)

// Result is the smallest failing scenario found, with what was tried.
type Result struct {
	Scenario *scenario.Scenario
	Origin   []int // per step of Scenario, its 1-based index in the original
	Runs     int
	Log      []string // one line per candidate: what was removed, and the verdict
}

// unit is a set of step indices removed together.
type unit []int

// units groups a scenario's steps: each fault with the later steps that
// refer to its name; every other step alone. The first wait (the warm-up)
// is a unit like the rest.
func units(sc *scenario.Scenario) []unit {
	taken := map[int]bool{}
	var out []unit
	for i, st := range sc.Steps {
		if taken[i] {
			continue
		}
		u := unit{i}
		if st.Fault != nil && st.As != "" {
			for j := i + 1; j < len(sc.Steps); j++ {
				if refersTo(sc.Steps[j], st.As) {
					u = append(u, j)
					taken[j] = true
				}
			}
		}
		out = append(out, u)
	}
	return out
}

// moveUnits groups the steps of a drawn scenario by move: every step that
// names an alias of move N (f<N>-…) and the steps after it that name none,
// up to the next move's first step. Steps before the first move stay. nil
// when the scenario names no drawn move.
func moveUnits(sc *scenario.Scenario) []unit {
	var out []unit
	cur := -1
	for i, st := range sc.Steps {
		if n, ok := drawnMove(st); ok {
			if len(out) == 0 || n != cur {
				out = append(out, unit{})
				cur = n
			}
			out[len(out)-1] = append(out[len(out)-1], i)
			continue
		}
		if len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], i)
		}
	}
	return out
}

// drawnMove is the number N of the drawn move (f<N>-…) a step names.
func drawnMove(st scenario.Step) (int, bool) {
	names := []string{st.As, st.Heal}
	if st.Wait != nil {
		names = append(names, st.Wait.Node, st.Wait.Excluding)
	}
	for _, n := range names {
		var k int
		if _, err := fmt.Sscanf(n, "f%d-", &k); err == nil && k > 0 {
			return k, true
		}
	}
	return 0, false
}

func refersTo(st scenario.Step, as string) bool {
	switch {
	case st.Heal == as:
		return true
	case st.Wait != nil && (st.Wait.Excluding == as || st.Wait.Node == as):
		return true
	case st.Assert != nil && st.Assert.Metric != nil && st.Assert.Metric.Node == as:
		return true
	}
	return false
}

// without is sc without the steps of u, with the origin of each step kept.
func without(sc *scenario.Scenario, origin []int, u unit) (*scenario.Scenario, []int) {
	c := *sc
	c.Steps = nil
	var o []int
	for i, st := range sc.Steps {
		if !slices.Contains(u, i) {
			c.Steps = append(c.Steps, st)
			o = append(o, origin[i])
		}
	}
	return &c, o
}

// describe names a unit for the log.
func describe(sc *scenario.Scenario, u unit) string {
	st := sc.Steps[u[0]]
	s := fmt.Sprintf("step %d (%s)", u[0]+1, st.Label())
	if len(u) > 1 {
		s += fmt.Sprintf(" with %d step(s) that name it", len(u)-1)
	}
	return s
}

// reload round-trips a candidate through the loader so it obeys every rule.
func reload(sc *scenario.Scenario) (*scenario.Scenario, error) {
	data, err := sc.Marshal()
	if err != nil {
		return nil, err
	}
	return scenario.Parse(data)
}

// Shrink reduces sc (which must fail) with at most maxRuns runs of try.
func Shrink(ctx context.Context, sc *scenario.Scenario, try Try, maxRuns int) (Result, error) {
	res := Result{Scenario: sc}
	for i := range sc.Steps {
		res.Origin = append(res.Origin, i+1)
	}
	attempt := func(label string, cand *scenario.Scenario, origin []int) (bool, error) {
		if res.Runs >= maxRuns || ctx.Err() != nil {
			return false, ctx.Err()
		}
		c, err := reload(cand)
		if err != nil {
			res.Log = append(res.Log, fmt.Sprintf("skip %s: does not load: %v", label, err))
			return false, nil
		}
		res.Runs++
		fails, err := try(ctx, c, origin)
		if err != nil {
			return false, err
		}
		verdict := "passes: kept"
		if fails {
			verdict = "still fails: removed"
			res.Scenario, res.Origin = c, origin
		}
		res.Log = append(res.Log, fmt.Sprintf("run %d: without %s → %s", res.Runs, label, verdict))
		return fails, nil
	}
	// A drawn scenario: whole moves first, last first.
	for progress := true; progress; {
		progress = false
		ms := moveUnits(res.Scenario)
		for k := len(ms) - 1; k >= 0 && len(ms) > 1; k-- {
			cand, origin := without(res.Scenario, res.Origin, ms[k])
			ok, err := attempt(fmt.Sprintf("move %d of %d (%d steps)", k+1, len(ms), len(ms[k])), cand, origin)
			if err != nil {
				return res, err
			}
			if ok {
				progress = true
				break
			}
		}
	}
	for progress := true; progress; {
		progress = false
		us := units(res.Scenario)
		// Last steps first: later faults often only add noise to an earlier cause.
		for k := len(us) - 1; k >= 0; k-- {
			if len(res.Scenario.Steps) <= 1 {
				break
			}
			cur := res.Scenario
			cand, origin := without(cur, res.Origin, us[k])
			ok, err := attempt(describe(cur, us[k]), cand, origin)
			if err != nil {
				return res, err
			}
			if ok {
				progress = true
				break // the units changed: regroup
			}
		}
	}
	// Then the cluster and the load: fewer masters, fewer etcd members, half the rate.
	for _, p := range []struct {
		label string
		apply func(*scenario.Scenario) bool
	}{
		{"one master fewer", func(s *scenario.Scenario) bool {
			if s.Cluster.Masters <= 2 {
				return false
			}
			s.Cluster.Masters--
			return true
		}},
		{"a single etcd member", func(s *scenario.Scenario) bool {
			if s.Cluster.Etcd == 1 {
				return false
			}
			s.Cluster.Etcd = 1
			return true
		}},
		{"half the traffic rate", func(s *scenario.Scenario) bool {
			if s.Traffic.Rate < 50 {
				return false
			}
			s.Traffic.Rate /= 2
			return true
		}},
	} {
		c := *res.Scenario
		if !p.apply(&c) {
			continue
		}
		if _, err := attempt(p.label, &c, res.Origin); err != nil {
			return res, err
		}
	}
	return res, nil
}
