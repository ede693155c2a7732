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
		inject: injectBlackhole,
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

// injectLinks adds the toxic to, or cuts, every link the spec resolves to;
// a failure part-way heals the links already done.
func injectLinks(ctx context.Context, env Env, s Spec, in *Injected) error {
	links, err := ResolveLinks(ctx, env, s)
	if err != nil {
		return err
	}
	in.Targets = links
	var done []Link
	name := fmt.Sprintf("%s-%d", s.Toxic, env.Rand().Uint32())
	for _, ln := range links {
		l, err := env.Link(ln)
		if err != nil {
			return errors.Join(err, healLinks(s, done, name))
		}
		if s.Kind == "link-down" {
			err = l.Down()
		} else {
			err = l.AddToxic(name, s.Toxic, stream(s), toxicity(s), s.Attrs)
		}
		if err != nil {
			return errors.Join(err, healLinks(s, done, name))
		}
		done = append(done, l)
	}
	in.heal = func(context.Context) error { return healLinks(s, done, name) }
	return nil
}

// injectBlackhole holds every byte on the links in both directions: a
// timeout toxic of 0 never closes a connection and passes nothing until
// it is removed.
func injectBlackhole(ctx context.Context, env Env, s Spec, in *Injected) error {
	links, err := ResolveLinks(ctx, env, s)
	if err != nil {
		return err
	}
	in.Targets = links
	name := fmt.Sprintf("blackhole-%d", env.Rand().Uint32())
	var done []Link
	heal := func() error {
		var errs []error
		for _, l := range done {
			errs = append(errs, l.RemoveToxic(name+"-up"), l.RemoveToxic(name+"-down"))
		}
		return errors.Join(errs...)
	}
	for _, ln := range links {
		l, err := env.Link(ln)
		if err != nil {
			return errors.Join(err, heal())
		}
		if err := l.AddToxic(name+"-up", "timeout", "upstream", 1, map[string]any{"timeout": 0}); err != nil {
			return errors.Join(err, heal())
		}
		if err := l.AddToxic(name+"-down", "timeout", "downstream", 1, map[string]any{"timeout": 0}); err != nil {
			_ = l.RemoveToxic(name + "-up")
			return errors.Join(err, heal())
		}
		done = append(done, l)
	}
	in.heal = func(context.Context) error { return heal() }
	return nil
}

func healLinks(s Spec, links []Link, toxicName string) error {
	var errs []error
	for _, l := range links {
		if s.Kind == "link-down" {
			errs = append(errs, l.Up())
		} else {
			errs = append(errs, l.RemoveToxic(toxicName))
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
