package faults

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// peerEnv is three etcd members behind a peer switch that records cuts.
type peerEnv struct {
	Env
	cut map[[2]string]bool
	rnd *rand.Rand
}

func (e *peerEnv) EtcdMembers() []string { return []string{"etcd-0", "etcd-1", "etcd-2"} }
func (e *peerEnv) Masters() []string     { return []string{"master-0"} }
func (e *peerEnv) Rand() *rand.Rand      { return e.rnd }
func (e *peerEnv) Running(string) bool   { return true }
func (e *peerEnv) CutPeers(_ context.Context, from, to string) error {
	e.cut[[2]string{from, to}] = true
	return nil
}
func (e *peerEnv) RestorePeers(_ context.Context, from, to string) error {
	delete(e.cut, [2]string{from, to})
	return nil
}

func (e *peerEnv) cuts() []string {
	var out []string
	for c := range e.cut {
		out = append(out, c[0]+"→"+c[1])
	}
	slices.Sort(out)
	return out
}

// Each form cuts exactly its pairs and directions, the fault names them,
// and the heal restores every one.
func TestEtcdPartitionFormsCutTheirPairsAndHeal(t *testing.T) {
	for _, c := range []struct {
		attrs map[string]any
		want  []string
	}{
		{nil, []string{"etcd-0→etcd-2", "etcd-1→etcd-2", "etcd-2→etcd-0", "etcd-2→etcd-1"}},
		{map[string]any{"direction": "out"}, []string{"etcd-2→etcd-0", "etcd-2→etcd-1"}},
		{map[string]any{"direction": "in"}, []string{"etcd-0→etcd-2", "etcd-1→etcd-2"}},
		{map[string]any{"form": "bridge"}, []string{"etcd-0→etcd-1", "etcd-1→etcd-0"}},
		{map[string]any{"form": "pair", "peer": "etcd-0", "direction": "out"}, []string{"etcd-2→etcd-0"}},
		{map[string]any{"with": "etcd-1"}, []string{"etcd-0→etcd-1", "etcd-0→etcd-2", "etcd-1→etcd-0", "etcd-2→etcd-0"}},
	} {
		e := &peerEnv{cut: map[[2]string]bool{}, rnd: rand.New(rand.NewPCG(1, 1))}
		s := Spec{Kind: "etcd-partition", Target: "etcd-2", Attrs: c.attrs}
		require.NoError(t, s.Validate())
		in, err := Inject(context.Background(), e, s)
		require.NoError(t, err, "%v", c.attrs)
		require.Equal(t, c.want, e.cuts(), "%v", c.attrs)
		got := slices.Clone(in.Targets)
		slices.Sort(got)
		require.Equal(t, c.want, got)
		require.NoError(t, in.Heal(context.Background()))
		require.Empty(t, e.cuts(), "%v: the heal restores every pair", c.attrs)
	}
}

func TestEtcdPartitionRefusesWhatItCannotDo(t *testing.T) {
	for _, s := range []Spec{
		{Kind: "etcd-partition"},
		{Kind: "etcd-partition", Target: "etcd-0", Attrs: map[string]any{"form": "ring"}},
		{Kind: "etcd-partition", Target: "etcd-0", Attrs: map[string]any{"direction": "sideways"}},
		{Kind: "etcd-partition", Target: "etcd-0", Attrs: map[string]any{"form": "pair"}},
		{Kind: "etcd-partition", Target: "etcd-0", Attrs: map[string]any{"form": "bridge", "direction": "out"}},
		{Kind: "etcd-partition", Target: "etcd-0", Attrs: map[string]any{"latency": 5}},
	} {
		require.Error(t, s.Validate(), "%+v", s)
	}
	e := &peerEnv{cut: map[[2]string]bool{}, rnd: rand.New(rand.NewPCG(1, 1))}
	_, err := Inject(context.Background(), e, Spec{Kind: "etcd-partition", Target: "etcd-0", Attrs: map[string]any{"with": "etcd-1,etcd-2"}})
	require.ErrorIs(t, err, ErrUnavailable, "nothing left on the other side")
	_, err = Inject(context.Background(), e, Spec{Kind: "etcd-partition", Target: "etcd-0", Attrs: map[string]any{"form": "pair", "peer": "etcd-0"}})
	require.ErrorIs(t, err, ErrUnavailable)
	require.Empty(t, e.cuts())
	k, _ := Lookup("etcd-partition")
	require.ErrorIs(t, k.Available(Shape{Etcd: 3, Masters: 3, Docker: true}), ErrUnavailable, "docker with peer TLS")
	require.NoError(t, k.Available(Shape{Etcd: 3, Masters: 3, Docker: true, PeerPairs: true}))
	require.ErrorIs(t, k.Available(Shape{Etcd: 1, Masters: 3, PeerPairs: true}), ErrUnavailable)
	require.NoError(t, k.Available(Shape{Etcd: 3, Masters: 3, PeerPairs: true}))
}
