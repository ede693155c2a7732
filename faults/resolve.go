package faults

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
)

// ResolveNode turns a target into one node name: primary, standby (a seeded
// choice among running standbys), master (any master), etcd-leader,
// etcd-follower, etcd (any member), or a name such as master-1 or etcd-0.
func ResolveNode(ctx context.Context, env Env, target string) (string, error) {
	pick := func(names []string) (string, error) {
		if len(names) == 0 {
			return "", fmt.Errorf("%w: no node for target %q", ErrUnavailable, target)
		}
		return names[env.Rand().IntN(len(names))], nil
	}
	switch target {
	case "primary":
		return env.Primary(ctx)
	case "standby":
		s, err := env.Standbys(ctx)
		if err != nil {
			return "", err
		}
		return pick(s)
	case "master":
		return pick(env.Masters())
	case "etcd-leader":
		return env.EtcdLeader(ctx)
	case "etcd-follower":
		l, err := env.EtcdLeader(ctx)
		if err != nil {
			return "", err
		}
		var f []string
		for _, m := range env.EtcdMembers() {
			if m != l {
				f = append(f, m)
			}
		}
		return pick(f)
	case "etcd":
		return pick(env.EtcdMembers())
	}
	if slices.Contains(env.Masters(), target) || slices.Contains(env.EtcdMembers(), target) {
		return target, nil
	}
	return "", fmt.Errorf("%w: unknown target %q (masters %v, etcd %v)", ErrUnavailable, target, env.Masters(), env.EtcdMembers())
}

// ResolveLinks expands a link pattern. "{target}" in the pattern is replaced
// by the resolved Target node (e.g. "{target}.etcd-*" with target primary cuts
// the primary off from every etcd member); "*" globs.
func ResolveLinks(ctx context.Context, env Env, s Spec) ([]string, error) {
	pattern := s.Link
	if strings.Contains(pattern, "{target}") {
		node, err := ResolveNode(ctx, env, s.Target)
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
