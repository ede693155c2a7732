package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
)

// The network family: toxiproxy links between nodes, and (docker) a node's
// own address.
func init() {
	register(&Kind{Name: "toxic", Family: "network", Heals: true,
		Doc:    "add a toxiproxy toxic to links; heal removes it",
		check:  checkToxic,
		inject: injectLinks,
		draw:   drawToxic,
	})
	register(&Kind{Name: "link-down", Family: "network", Heals: true, Outage: true,
		Doc: "cut links (connections reset, new ones refused); heal restores them",
		check: func(s Spec) error {
			if s.Link == "" {
				return fmt.Errorf("link-down: needs link")
			}
			return nil
		},
		inject: injectLinks,
		draw:   drawLinkDown,
	})
	register(&Kind{Name: "blackhole", Family: "network", Heals: true, Outage: true,
		Doc: "links accept connections and answer nothing: no byte passes either way, nothing is closed (a toxiproxy " +
			"timeout toxic of 0 on both streams), as a dead load balancer or a stuck server; heal lets bytes through again",
		check: func(s Spec) error {
			if s.Link == "" {
				return fmt.Errorf("blackhole: needs link")
			}
			return nil
		},
		inject: injectLinks,
		draw: func(r *rand.Rand, sh Shape) Spec {
			if sh.Snapshots && r.IntN(2) == 0 {
				return Spec{Kind: "blackhole", Link: "master-*.s3"}
			}
			return Spec{Kind: "blackhole", Target: []string{"primary", "standby"}[r.IntN(2)], Link: "{target}.etcd-*"}
		},
	})
	register(&Kind{Name: "disconnect", Family: "network", Heals: true, Outage: true,
		Doc: "docker runtime: cut a node's container off the run's network (a real partition: its own address unreachable " +
			"from every node and the harness); heal reconnects it at the same address",
		check: needsTarget,
		available: func(sh Shape) error {
			if !sh.Docker {
				return errors.New("a network disconnect needs the docker runtime (a container with an address of its own)")
			}
			return nil
		},
		inject: injectDisconnect,
		draw: func(r *rand.Rand, sh Shape) Spec {
			return Spec{Kind: "disconnect", Target: []string{"primary", "standby"}[r.IntN(2)]}
		},
	})
}

// Toxics are the toxiproxy toxic types a toxic fault may add.
var Toxics = []string{"latency", "timeout", "reset_peer", "bandwidth", "slicer", "limit_data", "slow_close"}

func checkToxic(s Spec) error {
	if s.Link == "" || s.Toxic == "" {
		return fmt.Errorf("toxic: needs link and toxic")
	}
	for _, t := range Toxics {
		if s.Toxic == t {
			return nil
		}
	}
	return fmt.Errorf("toxic %q: want latency, timeout, reset_peer, bandwidth, slicer, limit_data or slow_close", s.Toxic)
}

// drawToxic slows the masters' etcd or S3 links, all of them or one
// master's, with latency, a narrow bandwidth or sliced writes.
func drawToxic(r *rand.Rand, sh Shape) Spec {
	links := []string{"master-*.etcd-*", "{target}.etcd-*"}
	if sh.Snapshots {
		links = append(links, "master-*.s3")
	}
	s := Spec{Kind: "toxic", Link: links[r.IntN(len(links))]}
	if s.Link == "{target}.etcd-*" {
		s.Target = []string{"primary", "standby"}[r.IntN(2)]
	}
	switch r.IntN(3) {
	case 0:
		lat := 20 + r.IntN(200)
		s.Toxic, s.Attrs = "latency", map[string]any{"latency": lat, "jitter": lat / 4}
	case 1:
		s.Toxic, s.Attrs = "bandwidth", map[string]any{"rate": 64 + r.IntN(512)}
	default:
		s.Toxic, s.Attrs = "slicer", map[string]any{"average_size": 16 + r.IntN(64), "size_variation": 8, "delay": r.IntN(500)}
	}
	return s
}

// drawLinkDown cuts one master off etcd, every master off S3, or (three
// members) one member's peer link.
func drawLinkDown(r *rand.Rand, sh Shape) Spec {
	choices := []Spec{
		{Kind: "link-down", Target: "primary", Link: "{target}.etcd-*"},
		{Kind: "link-down", Target: "standby", Link: "{target}.etcd-*"},
	}
	if sh.Snapshots {
		choices = append(choices, Spec{Kind: "link-down", Link: "master-*.s3"})
	}
	if sh.Etcd >= 3 {
		choices = append(choices, Spec{Kind: "link-down", Link: fmt.Sprintf("etcd-%d.peer", r.IntN(sh.Etcd))})
	}
	return choices[r.IntN(len(choices))]
}

func injectDisconnect(ctx context.Context, env Env, s Spec, in *Injected) error {
	p, ok := env.(Partitioner)
	if !ok {
		return fmt.Errorf("%w: disconnect needs the docker runtime (a container with an address of its own)", ErrUnavailable)
	}
	node, err := resolveNode(ctx, env, s)
	if err != nil {
		return err
	}
	in.Targets = []string{node}
	if err := p.Disconnect(ctx, node); err != nil {
		return err
	}
	in.heal = func(ctx context.Context) error { return p.Reconnect(ctx, node) }
	return nil
}

// injectLinks adds its toxics to (blackhole: both ways; toxic: the one
// named), or cuts (link-down), every link the spec resolves to; a failure
// part-way heals the links already done.
func injectLinks(ctx context.Context, env Env, s Spec, in *Injected) error {
	links, err := ResolveLinks(ctx, env, s)
	if err != nil {
		return err
	}
	in.Targets = links
	base := s.Toxic
	if s.Kind == "blackhole" {
		base = "blackhole"
	}
	toxics := linkToxics(s, fmt.Sprintf("%s-%d", base, env.Rand().Uint32()))
	var done []Link
	for _, ln := range links {
		l, err := env.Link(ln)
		if err != nil {
			return errors.Join(err, healLinks(s, done, toxics))
		}
		if s.Kind == "link-down" {
			err = l.Down()
		} else {
			err = addToxics(l, toxics)
		}
		if err != nil {
			return errors.Join(err, healLinks(s, done, toxics))
		}
		done = append(done, l)
	}
	in.heal = func(context.Context) error { return healLinks(s, done, toxics) }
	return nil
}

// linkToxic is one toxic a network fault adds to each of its links.
type linkToxic struct {
	name, kind, stream string
	toxicity           float32
	attrs              map[string]any
}

// linkToxics are the toxics s adds to each link, named from name (none
// for link-down, which cuts the link instead).
func linkToxics(s Spec, name string) []linkToxic {
	switch s.Kind {
	case "link-down":
		return nil
	case "blackhole":
		// A timeout toxic of 0 never closes a connection and passes
		// nothing until it is removed.
		hold := map[string]any{"timeout": 0}
		return []linkToxic{{name + "-up", "timeout", "upstream", 1, hold}, {name + "-down", "timeout", "downstream", 1, hold}}
	}
	return []linkToxic{{name, s.Toxic, stream(s), toxicity(s), s.Attrs}}
}

// addToxics adds every toxic to l; a failure removes those it added.
func addToxics(l Link, toxics []linkToxic) error {
	for i, t := range toxics {
		if err := l.AddToxic(t.name, t.kind, t.stream, t.toxicity, t.attrs); err != nil {
			for _, added := range toxics[:i] {
				_ = l.RemoveToxic(added.name)
			}
			return err
		}
	}
	return nil
}

func healLinks(s Spec, links []Link, toxics []linkToxic) error {
	var errs []error
	for _, l := range links {
		if s.Kind == "link-down" {
			errs = append(errs, l.Up())
			continue
		}
		for _, t := range toxics {
			errs = append(errs, l.RemoveToxic(t.name))
		}
	}
	return errors.Join(errs...)
}

func stream(s Spec) string {
	if s.Stream == "" {
		return "downstream"
	}
	return s.Stream
}

func toxicity(s Spec) float32 {
	if s.Toxicity <= 0 {
		return 1
	}
	return s.Toxicity
}
