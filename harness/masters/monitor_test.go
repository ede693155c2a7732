package masters

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/proc"
)

// frozenDriver answers health for every node but one, whose requests hang
// until their context ends (a SIGSTOPped process); the role of a node
// comes from roles, read at each request.
type frozenDriver struct {
	Reference
	frozen string
	roles  map[string]*atomic.Value
}

func (d *frozenDriver) Health(ctx context.Context, n *Node) (client.Health, error) {
	if n.Name == d.frozen {
		<-ctx.Done()
		return client.Health{}, ctx.Err()
	}
	role := d.roles[n.Name].Load().(string)
	return client.Health{NodeID: n.Name, Role: role, Serving: role == "primary"}, nil
}

// TestAFrozenNodeNeverDelaysTheOthers: with one node that never answers,
// every Health call still returns within NoAnswer and a poll, the frozen
// node "down" with how long it has been silent, and a role change of
// another node is seen by the very next call — not after the frozen
// node's request times out, as when every round waited for every node.
func TestAFrozenNodeNeverDelaysTheOthers(t *testing.T) {
	d := &frozenDriver{frozen: "master-0", roles: map[string]*atomic.Value{}}
	s := &Set{group: proc.NewGroup(), opts: Options{Driver: d}}
	for _, name := range []string{"master-0", "master-1", "master-2"} {
		s.Nodes = append(s.Nodes, &Node{Name: name})
		d.roles[name] = &atomic.Value{}
		d.roles[name].Store("standby")
	}
	s.mon = newMonitor(s)
	defer s.Close()

	ctx := context.Background()
	for range 10 {
		began := time.Now()
		hs := s.Health(ctx)
		require.Less(t, time.Since(began), NoAnswer+PollInterval+250*time.Millisecond, "a frozen node holds a call up past NoAnswer")
		require.Equal(t, "down", hs[0].Role)
		require.Contains(t, hs[0].ApplyError, "no answer for")
		require.Equal(t, "standby", hs[1].Role)
	}
	// Silent for good now: a call waits on no one.
	d.roles["master-2"].Store("primary")
	began := time.Now()
	hs := s.Health(ctx)
	require.Less(t, time.Since(began), 250*time.Millisecond, "a node known to be silent costs a call nothing")
	require.True(t, hs[2].Serving, "the role change is in the first reading begun after the call")
}

// slowDriver answers every node, one of them only after a delay longer
// than NoAnswer (a loaded machine, not a frozen node).
type slowDriver struct {
	Reference
	slow  string
	delay time.Duration
}

func (d *slowDriver) Health(ctx context.Context, n *Node) (client.Health, error) {
	if n.Name == d.slow {
		select {
		case <-time.After(d.delay):
		case <-ctx.Done():
			return client.Health{}, ctx.Err()
		}
	}
	return client.Health{NodeID: n.Name, Role: "primary", Serving: n.Name == d.slow}, nil
}

// TestAJudgementWaitsForASlowAnswer: a node that answers, only slowly, is
// "down" to Health (which never waits past NoAnswer) but serving to
// HealthAnswered, which an assert judges from; a node that never answers
// is down to both, within RequestTimeout and a poll.
func TestAJudgementWaitsForASlowAnswer(t *testing.T) {
	d := &slowDriver{slow: "master-1", delay: 3 * NoAnswer}
	s := &Set{group: proc.NewGroup(), opts: Options{Driver: d}}
	for _, name := range []string{"master-0", "master-1"} {
		s.Nodes = append(s.Nodes, &Node{Name: name})
	}
	s.mon = newMonitor(s)
	defer s.Close()
	ctx := context.Background()
	require.Equal(t, "down", s.Health(ctx)[1].Role, "Health calls a slow node down")
	hs := s.HealthAnswered(ctx)
	require.True(t, hs[1].Serving, "an assert must not call a slow node down")

	f := &frozenDriver{frozen: "master-0", roles: map[string]*atomic.Value{}}
	fs := &Set{group: proc.NewGroup(), opts: Options{Driver: f}}
	fs.Nodes = []*Node{{Name: "master-0"}}
	fs.mon = newMonitor(fs)
	defer fs.Close()
	began := time.Now()
	require.Equal(t, "down", fs.HealthAnswered(ctx)[0].Role)
	require.Less(t, time.Since(began), RequestTimeout+PollInterval+NoAnswer+500*time.Millisecond)
}
