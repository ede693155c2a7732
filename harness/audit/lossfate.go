package audit

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/history"
)

// lossFates says, for acknowledged mutations that never became durable,
// what happened next to the node that acknowledged them: the first fault,
// exit or role change on that node (or a fault on etcd) after the
// acknowledgement, from the runner's timeline, and its class (LossClass).
// Lost writes before a crash are one bug (an acknowledgement before its
// append is durable); lost writes on a node cut off from etcd another; lost
// writes on a node nothing happened to a third, the one nobody expects.
// One line per node and fate, before the lost writes themselves:
//
//	[ack-durable] lost (its node went down): 11 acknowledged by master-1 from 16.064s to 16.068s; next on that node: kill (ended its process) at 16.100s
//
// A loss nothing explains that is ambiguous (the same key's same op was
// acknowledged again, and the history cannot tell which of the two its one
// entry is: the other may be the one lost, to a fault) is put in a class
// of its own.
func lossFates(events []Event, lost []*history.Op, ambiguous func(*history.Op) bool) []string {
	type key struct{ node, fate string }
	type group struct {
		n           int
		first, last int64
		at          int64
		class       LossClass
	}
	groups := map[key]*group{}
	var order []key
	for _, op := range lost {
		fate, class, at := nextOnNode(events, op.Node, op.Complete)
		if class == LossNothing && ambiguous != nil && ambiguous(op) {
			fate, class, at = "nothing, but the same key's same op was acknowledged twice, and without positions the history "+
				"cannot tell which of the two was lost", LossAmbiguous, 0
		}
		k := key{op.Node, fate}
		g := groups[k]
		if g == nil {
			g = &group{first: op.Complete, at: at, class: class}
			groups[k] = g
			order = append(order, k)
		}
		g.n++
		g.first, g.last = min(g.first, op.Complete), max(g.last, op.Complete)
	}
	sort.SliceStable(order, func(i, j int) bool { return groups[order[i]].first < groups[order[j]].first })
	var out []string
	for _, k := range order {
		g := groups[k]
		when := ""
		if g.at > 0 && g.at >= g.last {
			when = " at " + seconds(g.at)
		}
		out = append(out, fmt.Sprintf("[ack-durable] lost (%s): %d acknowledged by %s from %s to %s; next on that node: %s%s", g.class, g.n,
			k.node, seconds(g.first), seconds(g.last), k.fate, when))
	}
	return out
}

// LossClass is what became of the node that lost acknowledged writes, as
// a finding groups them.
type LossClass string

// The classes of a lost acknowledgement's fate.
const (
	// LossDown: its node went down (killed, stopped, restarted, crashed,
	// frozen, held at a failpoint) or exited.
	LossDown LossClass = "its node went down"
	// LossCut: its node was cut off from etcd (a network fault on its links).
	LossCut LossClass = "its node was cut off"
	// LossSteppedDown: its node stepped down while up, no fault on it.
	LossSteppedDown LossClass = "its node stepped down"
	// LossEtcd: an etcd member was faulted, nothing on its node.
	LossEtcd LossClass = "etcd was faulted"
	// LossNothing: nothing happened to its node to the end of the run.
	LossNothing LossClass = "nothing happened to its node"
	// LossAmbiguous: nothing happened to its node, but the same key's
	// same op was acknowledged twice and the one durable entry may be
	// either's.
	LossAmbiguous LossClass = "which of two acknowledgements was lost is unknown"
)

// LossFateNone is the fate of a lost acknowledgement whose node nothing
// happened to afterwards.
const LossFateNone = "nothing (no fault, exit or step-down on it or on etcd to the end of the run)"

// nextOnNode is what the node acknowledged under or met next after t: a
// network fault on its links or a fault on an etcd member still in force
// at t (acknowledged while cut off), else the first event after t that
// happened to node — a fault on it (or one that ended its process), a
// fault on an etcd member, its exit, or a role change from primary — its
// class, and when.
func nextOnNode(events []Event, node string, t int64) (string, LossClass, int64) {
	if fate, class, at, ok := inForceAt(events, node, t); ok {
		return fate, class, at
	}
	for _, e := range events {
		if e.At < t {
			continue
		}
		switch e.Kind {
		case "fault":
			switch {
			case slices.Contains(e.Ended, node):
				return e.Name + " (ended its process)", LossDown, e.At
			case namesNode(e.Target, node) && networkFault[e.Name]:
				return e.Name, LossCut, e.At
			case namesNode(e.Target, node):
				return e.Name, LossDown, e.At
			case namesNode(e.Target, "etcd"):
				return "etcd " + e.Name, LossEtcd, e.At
			}
		case "exit":
			if e.Target != node {
				continue
			}
			if e.Name == ExitArmed {
				return "a crash at a failpoint the scenario armed", LossDown, e.At
			}
			return "exited on its own (" + exitCauseOf(e.Detail) + ")", LossDown, e.At
		case "role":
			if e.Target != node || !strings.HasPrefix(e.Detail, "primary → ") {
				continue
			}
			if strings.HasSuffix(e.Detail, "→ down") {
				return "went down (" + e.Detail + ")", LossDown, e.At
			}
			return "stepped down (" + e.Detail + ")", LossSteppedDown, e.At
		}
	}
	return LossFateNone, LossNothing, 0
}

// inForceAt is a network fault on node's links, or a fault on an etcd
// member, injected before t and not healed by then (the latest such).
func inForceAt(events []Event, node string, t int64) (string, LossClass, int64, bool) {
	type active struct {
		e     Event
		class LossClass
	}
	var on []active
	for _, e := range events {
		if e.At >= t {
			break
		}
		switch {
		case e.Kind == "fault" && e.OK && namesNode(e.Target, node) && networkFault[e.Name]:
			on = append(on, active{e, LossCut})
		case e.Kind == "fault" && e.OK && namesNode(e.Target, "etcd"):
			on = append(on, active{e, LossEtcd})
		case e.Kind == "heal":
			on = slices.DeleteFunc(on, func(a active) bool { return a.e.Detail == e.Detail && a.e.Name == e.Name })
		}
	}
	if len(on) == 0 {
		return "", "", 0, false
	}
	a := on[len(on)-1]
	what := a.e.Name + " on its links"
	if a.class == LossEtcd {
		what = "etcd " + a.e.Name
	}
	return "acknowledged while " + what + " was in force (since " + seconds(a.e.At) + ")", a.class, a.e.At, true
}

// networkFault are the fault kinds that cut or slow a node's links.
var networkFault = map[string]bool{"link-down": true, "blackhole": true, "toxic": true, "disconnect": true}

// namesNode says whether a fault's target list ("[master-1]",
// "[master-1.etcd-0 master-1.etcd-1]", "all masters", a partition's
// "[etcd-0→etcd-1 …]") names node (a node name, or "etcd" for any
// member).
func namesNode(target, node string) bool {
	if node == "etcd" {
		return etcdMember.MatchString(target) && !strings.Contains(target, ".etcd-")
	}
	return regexp.MustCompile(`(^|[\[\s,])` + regexp.QuoteMeta(node) + `($|[\]\s,.])`).MatchString(target)
}

var etcdMember = regexp.MustCompile(`(^|[\[\s,→])etcd-\d+($|[\]\s,.→])`)
