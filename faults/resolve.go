package faults

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// resolveNode is ResolveNode for a spec: its target, never its Excluding node.
func resolveNode(ctx context.Context, env Env, s Spec) (string, error) {
	var exclude []string
	if s.Excluding != "" {
		exclude = []string{s.Excluding}
	}
	return ResolveNode(ctx, env, s.Target, exclude...)
}

// ResolveNode turns a target into one node name: primary, standby (a seeded
// choice among running standbys), master (any master), etcd-leader,
// etcd-follower, etcd (any member), or a name such as master-1 or etcd-0.
// A seeded choice never picks a node in exclude; a primary, leader or
// named target that is excluded is unavailable.
func ResolveNode(ctx context.Context, env Env, target string, exclude ...string) (string, error) {
	pick := func(names []string) (string, error) {
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(exclude, n) })
		if len(names) == 0 {
			return "", fmt.Errorf("%w: no node for target %q (excluding %v)", ErrUnavailable, target, exclude)
		}
		return names[env.Rand().IntN(len(names))], nil
	}
	excluded := func(n string, err error) (string, error) {
		if err == nil && slices.Contains(exclude, n) {
			return "", fmt.Errorf("%w: target %q is %s, which is excluded", ErrUnavailable, target, n)
		}
		return n, err
	}
	switch target {
	case "primary":
		return excluded(env.Primary(ctx))
	case "standby":
		s, err := env.Standbys(ctx)
		if err != nil {
			return "", err
		}
		return pick(s)
	case "master":
		return pick(env.Masters())
	case "etcd-leader":
		return excluded(env.EtcdLeader(ctx))
	case "etcd-follower":
		l, err := env.EtcdLeader(ctx)
		if err != nil {
			return "", err
		}
		return pick(slices.DeleteFunc(liveMembers(env), func(m string) bool { return m == l }))
	case "etcd":
		return pick(liveMembers(env))
	}
	if slices.Contains(env.Masters(), target) || slices.Contains(env.EtcdMembers(), target) {
		return excluded(target, nil)
	}
	return "", fmt.Errorf("%w: unknown target %q (masters %v, etcd %v)", ErrUnavailable, target, env.Masters(), env.EtcdMembers())
}

// liveMembers are the etcd members whose process is up and not frozen: a
// seeded choice of a member to fault never lands on one another fault has
// already taken down (killing a paused follower would fault nothing new).
func liveMembers(env Env) []string {
	return slices.DeleteFunc(slices.Clone(env.EtcdMembers()), func(m string) bool { return !env.Running(m) || env.Paused(m) })
}

// ResolveLinks expands a link pattern. "{target}" in the pattern is replaced
// by the resolved Target node (e.g. "{target}.etcd-*" with target primary cuts
// the primary off from every etcd member); "*" globs.
func ResolveLinks(ctx context.Context, env Env, s Spec) ([]string, error) {
	pattern := s.Link
	if strings.Contains(pattern, "{target}") {
		node, err := resolveNode(ctx, env, s)
		if err != nil {
			return nil, err
		}
		pattern = strings.ReplaceAll(pattern, "{target}", node)
	}
	var out []string
	for _, l := range env.Links() {
		if ok, _ := path.Match(pattern, l); ok {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no link matches %q (links: %s)", ErrUnavailable, pattern, strings.Join(env.Links(), ", "))
	}
	return out, nil
}

// GarbageTarget is what a garbage fault overwrites: one etcd key of the
// contract (Name, one of GarbageKeys or TargetBatches; for batches Batch
// says which) or one object of the snapshot a pointer slot names (Slot and
// Object).
type GarbageTarget struct {
	Name   string // a GarbageKeys name, or TargetBatches
	Batch  string // first | last | suffix | a batch id
	Slot   string // latest | fallback
	Object string // chunk | segments.bin | manifest.json | descriptor.json
}

// The etcd keys a garbage fault names, as a scenario writes them.
const (
	TargetPrefix      = "durable_prefix"
	TargetView        = "producer_view"
	TargetLeader      = "leader"
	TargetMaintenance = "snapshot/maintenance"
	TargetLatest      = "snapshot/latest"
	TargetFallback    = "snapshot/fallback"
	TargetFloor       = "snapshot/compaction_floor"
	TargetBatches     = "batches"
)

// GarbageKeys are the etcd keys of the contract a garbage fault can overwrite
// (besides batches/first|last|suffix|<id>).
var GarbageKeys = []string{TargetPrefix, TargetView, TargetLeader, TargetMaintenance, TargetLatest, TargetFallback, TargetFloor}

// key is the etcd key the target names in ks: for the leader the election
// prefix (the leader's key is the oldest under it), for batches the batch
// prefix (Batch says which).
func (t GarbageTarget) key(ks keyspace.Keyspace) string {
	switch t.Name {
	case TargetPrefix:
		return ks.DurablePrefix()
	case TargetView:
		return ks.ProducerView()
	case TargetLeader:
		return ks.Leader()
	case TargetMaintenance:
		return ks.SnapshotMaintenance()
	case TargetLatest:
		return ks.SnapshotLatest()
	case TargetFallback:
		return ks.SnapshotFallback()
	case TargetFloor:
		return ks.CompactionFloor()
	case TargetBatches:
		return ks.BatchPrefix()
	}
	return ""
}

// GarbageObjects are the object kinds of a published snapshot.
var GarbageObjects = []string{"chunk", "segments.bin", "manifest.json", "descriptor.json"}

// ParseGarbageTarget resolves a garbage fault's target name; an unknown one
// is an error that lists every target.
func ParseGarbageTarget(target string) (GarbageTarget, error) {
	if slices.Contains(GarbageKeys, target) {
		return GarbageTarget{Name: target}, nil
	}
	if which, ok := strings.CutPrefix(target, TargetBatches+"/"); ok {
		switch which {
		case "first", "last", "suffix":
			return GarbageTarget{Name: TargetBatches, Batch: which}, nil
		}
		if id, err := strconv.ParseUint(which, 10, 64); err == nil && id > 0 {
			return GarbageTarget{Name: TargetBatches, Batch: which}, nil
		}
	}
	if slot, obj, ok := strings.Cut(target, "/"); ok && (slot == "latest" || slot == "fallback") && slices.Contains(GarbageObjects, obj) {
		return GarbageTarget{Slot: slot, Object: obj}, nil
	}
	return GarbageTarget{}, fmt.Errorf("garbage: target %q: want an etcd key (%s, batches/first|last|suffix|<id>) or an "+
		"object of a pointer's snapshot ({latest|fallback}/{%s})",
		target, strings.Join(GarbageKeys, ", "), strings.Join(GarbageObjects, "|"))
}
