package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// PeerPartitioner cuts the raft traffic between two etcd members, one
// direction at a time, leaving every other link as it is (the masters'
// client links to both members included).
type PeerPartitioner interface {
	// CutPeers drops every raft message from → to until RestorePeers.
	CutPeers(ctx context.Context, from, to string) error
	RestorePeers(ctx context.Context, from, to string) error
}

// Partition forms (attrs.form) and directions (attrs.direction).
const (
	PartitionIsolate = "isolate" // the target's side (target plus attrs.with) against every other member
	PartitionBridge  = "bridge"  // every member but the target cut from every other; the target reaches all
	PartitionPair    = "pair"    // the target and attrs.peer only

	DirectionBoth = "both"
	DirectionOut  = "out" // the target side's messages to the others are dropped
	DirectionIn   = "in"  // the others' messages to the target side are dropped
)

func init() {
	register(&Kind{Name: "etcd-partition", Family: "network", Heals: true, Outage: true,
		Doc: "partition etcd members from each other, raft traffic only (the masters' client links to every member stay " +
			"up, so a master can be left reaching only a member cut from the quorum): attrs.form isolate (default: the target " +
			"member, with attrs.with members on its side, against the rest: a minority/majority split), bridge (every " +
			"member but the target cut from every other, the target reaching all) or pair (the target and attrs.peer); " +
			"attrs.direction both (default), out (the target side's messages dropped) or in (messages to it dropped); " +
			"heal restores every pair it cut. Plain peer links only (not with peer TLS)",
		check:     checkEtcdPartition,
		available: peerPairsAvailable,
		inject:    injectEtcdPartition,
		draw:      drawEtcdPartition,
	})
}

func peerPairsAvailable(sh Shape) error {
	if !sh.PeerPairs {
		return errors.New("needs the peer switch, which reads etcd's peer headers: not with peer TLS")
	}
	if sh.Etcd < 3 {
		return errors.New("needs at least 3 etcd members")
	}
	return nil
}

func checkEtcdPartition(s Spec) error {
	for k := range s.Attrs {
		if k != "form" && k != "direction" && k != "with" && k != "peer" {
			return fmt.Errorf("etcd-partition: attrs.%s: only form, direction, with and peer are known", k)
		}
	}
	if s.Target == "" {
		return errors.New("etcd-partition: needs a target member (etcd-N, etcd-leader, etcd-follower, etcd)")
	}
	form, dir := partitionForm(s), partitionDirection(s)
	switch form {
	case PartitionIsolate, PartitionBridge, PartitionPair:
	default:
		return fmt.Errorf("etcd-partition: attrs.form %q: want isolate, bridge or pair", form)
	}
	switch dir {
	case DirectionBoth, DirectionOut, DirectionIn:
	default:
		return fmt.Errorf("etcd-partition: attrs.direction %q: want both, out or in", dir)
	}
	if form == PartitionPair && attrString(s, "peer") == "" {
		return errors.New("etcd-partition: form pair needs attrs.peer (the other member)")
	}
	if form == PartitionBridge && dir != DirectionBoth {
		return errors.New("etcd-partition: a bridge cuts both directions")
	}
	return nil
}

func partitionForm(s Spec) string {
	if f := attrString(s, "form"); f != "" {
		return f
	}
	return PartitionIsolate
}

func partitionDirection(s Spec) string {
	if d := attrString(s, "direction"); d != "" {
		return d
	}
	return DirectionBoth
}

func attrString(s Spec, k string) string {
	v, _ := s.Attrs[k].(string)
	return strings.TrimSpace(v)
}

// partitionCuts are the directed pairs (from, to) a partition cuts.
func partitionCuts(members []string, target, form, dir string, with []string, peer string) ([][2]string, error) {
	var side, rest []string
	switch form {
	case PartitionPair:
		if !slices.Contains(members, peer) || peer == target {
			return nil, fmt.Errorf("%w: attrs.peer %q is not another member (members: %s)", ErrUnavailable, peer, strings.Join(members, ", "))
		}
		side, rest = []string{target}, []string{peer}
	case PartitionBridge:
		var cuts [][2]string
		for _, a := range members {
			for _, b := range members {
				if a != b && a != target && b != target {
					cuts = append(cuts, [2]string{a, b})
				}
			}
		}
		return cuts, nil
	default:
		side = append([]string{target}, with...)
		for _, m := range members {
			if !slices.Contains(side, m) {
				rest = append(rest, m)
			}
		}
		for _, w := range with {
			if !slices.Contains(members, w) {
				return nil, fmt.Errorf("%w: attrs.with %q is not a member (members: %s)", ErrUnavailable, w, strings.Join(members, ", "))
			}
		}
		if len(rest) == 0 {
			return nil, fmt.Errorf("%w: nothing on the other side of %s", ErrUnavailable, strings.Join(side, ", "))
		}
	}
	var cuts [][2]string
	for _, a := range side {
		for _, b := range rest {
			if dir != DirectionIn {
				cuts = append(cuts, [2]string{a, b})
			}
			if dir != DirectionOut {
				cuts = append(cuts, [2]string{b, a})
			}
		}
	}
	return cuts, nil
}

func injectEtcdPartition(ctx context.Context, env Env, s Spec, in *Injected) error {
	p, ok := env.(PeerPartitioner)
	if !ok {
		return fmt.Errorf("%w: etcd-partition needs the cluster's peer switch", ErrUnavailable)
	}
	target, err := resolveNode(ctx, env, s)
	if err != nil {
		return err
	}
	members := env.EtcdMembers()
	if !slices.Contains(members, target) {
		return fmt.Errorf("%w: etcd-partition target %s is not an etcd member", ErrUnavailable, target)
	}
	var with []string
	for _, w := range strings.Split(attrString(s, "with"), ",") {
		if w = strings.TrimSpace(w); w != "" {
			with = append(with, w)
		}
	}
	cuts, err := partitionCuts(members, target, partitionForm(s), partitionDirection(s), with, attrString(s, "peer"))
	if err != nil {
		return err
	}
	var done [][2]string
	restore := func(ctx context.Context) error {
		var errs []error
		for _, c := range done {
			errs = append(errs, p.RestorePeers(ctx, c[0], c[1]))
		}
		return errors.Join(errs...)
	}
	for _, c := range cuts {
		if err := p.CutPeers(ctx, c[0], c[1]); err != nil {
			return errors.Join(err, restore(context.WithoutCancel(ctx)))
		}
		done = append(done, c)
		in.Targets = append(in.Targets, c[0]+"→"+c[1])
	}
	in.heal = restore
	return nil
}

// drawEtcdPartition isolates a member (either direction, or both) or
// bridges the cluster through one.
func drawEtcdPartition(r *rand.Rand, sh Shape) Spec {
	targets := []string{"etcd-leader", "etcd-follower"}
	s := Spec{Kind: "etcd-partition", Target: targets[r.IntN(len(targets))]}
	switch r.IntN(4) {
	case 0:
		s.Attrs = map[string]any{"form": PartitionBridge}
	case 1:
		s.Attrs = map[string]any{"direction": DirectionOut}
	case 2:
		s.Attrs = map[string]any{"direction": DirectionIn}
	}
	return s
}
