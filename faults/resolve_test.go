package faults

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// memberEnv is three etcd members with a leader and per-member process
// states: just what resolving an etcd target reads (nil embed otherwise).
type memberEnv struct {
	Env
	leader       string
	down, paused []string
	rnd          *rand.Rand
}

func (e *memberEnv) EtcdMembers() []string { return []string{"etcd-0", "etcd-1", "etcd-2"} }
func (e *memberEnv) EtcdLeader(context.Context) (string, error) {
	return e.leader, nil
}
func (e *memberEnv) Running(n string) bool { return !slices.Contains(e.down, n) }
func (e *memberEnv) Paused(n string) bool  { return slices.Contains(e.paused, n) }
func (e *memberEnv) Rand() *rand.Rand      { return e.rnd }

// etcd-follower and etcd never pick a member that is paused or down, over
// many seeded draws; with no such member left the target is unavailable.
func TestEtcdTargetsSkipPausedAndDownMembers(t *testing.T) {
	env := &memberEnv{leader: "etcd-0", paused: []string{"etcd-1"}, rnd: rand.New(rand.NewPCG(1, 2))}
	for range 200 {
		n, err := ResolveNode(context.Background(), env, "etcd-follower")
		require.NoError(t, err)
		require.Equal(t, "etcd-2", n, "etcd-1 is paused, etcd-0 leads")
		n, err = ResolveNode(context.Background(), env, "etcd")
		require.NoError(t, err)
		require.NotEqual(t, "etcd-1", n)
	}
	env.down = []string{"etcd-2"}
	_, err := ResolveNode(context.Background(), env, "etcd-follower")
	require.ErrorIs(t, err, ErrUnavailable, "the only follower not paused is down")
}
