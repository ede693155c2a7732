package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// Kind is one fault kind, whole: its name and what it does, what a spec of
// it must say, which clusters it applies to, how it is injected, and how the
// swarm draws it. Every kind is registered once (register, in the file of
// its family); validation, injection, the kind listing, the audits and the
// swarm's menu all read the registry, so a new kind reaches them all by
// being registered.
type Kind struct {
	Name string
	// Family groups kinds by what they act on: process, network, failpoint,
	// etcd, s3, data, workdir (one file each).
	Family string
	Doc    string
	// Damages: the kind writes records that are invalid on purpose, so an
	// audit that judges the records left behind must not count them against
	// the system.
	Damages bool
	// Heals: a heal step undoes it (the others are undone only by the
	// system itself, or never).
	Heals bool
	// Outage: until healed, the target node is out of service (stopped,
	// frozen or cut off), so a primary it hits is replaced.
	Outage bool
	// Publications is how many new snapshot publications repair what a
	// kind without a heal leaves in the pointers (a damaged latest rotates
	// to fallback, then out): a run that must end with both pointers
	// verifying waits for them.
	Publications int
	// NotDrawn says why the swarm never draws the kind (when draw is nil).
	NotDrawn string

	check     func(Spec) error  // the spec's own fields; nil: none beyond the kind
	available func(Shape) error // nil: every cluster
	inject    func(ctx context.Context, env Env, s Spec, in *Injected) error
	draw      func(r *rand.Rand, sh Shape) Spec // a spec for a swarm run of shape sh
}

// Shape is what decides whether a kind applies to a cluster at all.
type Shape struct {
	Etcd, Masters int
	Snapshots     bool // standbys publish snapshots to an object store
	Retention     bool // snapshot GC and OpLog pruning run
	// StoreFiles: the harness reaches the files behind the store's objects.
	StoreFiles bool
	// Docker: nodes are containers with addresses of their own.
	Docker bool
	// PeerPairs: etcd members can be partitioned pair by pair, one
	// direction at a time (the cluster's peer switch: plain peer links, on
	// either runtime).
	PeerPairs bool
	// Mount: the harness may mount a filesystem (CAP_SYS_ADMIN).
	Mount bool
}

// Available says why the kind cannot apply to a cluster of shape sh (nil
// when it can).
func (k *Kind) Available(sh Shape) error {
	if k.available == nil {
		return nil
	}
	if err := k.available(sh); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, k.Name, err)
	}
	return nil
}

// Draw is a spec of the kind for a swarm run of shape sh, or false when the
// swarm does not draw the kind or it does not apply to sh.
func (k *Kind) Draw(r *rand.Rand, sh Shape) (Spec, bool) {
	if k.draw == nil || k.Available(sh) != nil {
		return Spec{}, false
	}
	return k.draw(r, sh), true
}

// registry holds every kind by name, filled once by the family files'
// init functions and read only afterwards.
var registry = map[string]*Kind{}

func register(k *Kind) {
	switch {
	case k.Name == "" || k.Family == "" || k.Doc == "" || k.inject == nil:
		panic(fmt.Sprintf("faults: kind %q registered without name, family, doc or inject", k.Name))
	case k.draw == nil && k.NotDrawn == "":
		panic(fmt.Sprintf("faults: kind %q neither draws for the swarm nor says why not", k.Name))
	case registry[k.Name] != nil:
		panic(fmt.Sprintf("faults: kind %q registered twice", k.Name))
	}
	registry[k.Name] = k
}

// Lookup is the registered kind of that name.
func Lookup(name string) (*Kind, bool) {
	k, ok := registry[name]
	return k, ok
}

// Kinds are every registered kind, by name.
func Kinds() []*Kind {
	out := make([]*Kind, 0, len(registry))
	for _, k := range registry {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Damaging reports whether the kind of that name damages records on
// purpose (false for an unknown name).
func Damaging(name string) bool {
	k, ok := registry[name]
	return ok && k.Damages
}

func kindNames() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Name)
	}
	return out
}

// Markdown is the kinds table of docs/faults.md, from the registry.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| kind | family | heal | damages records | swarm | what it does |\n|---|---|---|---|---|---|\n")
	yes := map[bool]string{true: "yes", false: "no"}
	for _, k := range Kinds() {
		swarm := "draws it"
		if k.draw == nil {
			swarm = "no: " + k.NotDrawn
		} else if k.available != nil {
			swarm = "draws it where it applies"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", k.Name, k.Family, yes[k.Heals], yes[k.Damages], swarm, strings.ReplaceAll(k.Doc, "|", "\\|"))
	}
	return b.String()
}
