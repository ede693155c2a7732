package runner

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/client"
)

func healthAt(node string, batch uint64, serving bool) client.Health {
	return client.Health{NodeID: node, Serving: serving, Cursor: client.Cursor{BatchID: batch}}
}

// The settle follows etcd's durable prefix: an append in flight when the
// traffic stopped (batch 323 after a first read of 322) is waited for, so
// a standby that has not applied it is not called caught up — the CI
// bundle partition-etcd-leader-seed32 was collected with master-0 at 322
// and failed convergence. A step's wait keeps its first target: under
// load the prefix moves on.
func TestTheSettleWaitsForAnAppendThatLandsAfterItsFirstRead(t *testing.T) {
	durable := uint64(322)
	read := func() (uint64, error) { return durable, nil }
	running := []bool{true, true, true}
	at := func(a, b, c uint64) []client.Health {
		return []client.Health{healthAt("master-0", a, false), healthAt("master-1", b, false), healthAt("master-2", c, true)}
	}

	settle, step := catchUp{follow: true}, catchUp{}
	ok, _ := settle.check(at(321, 322, 322), running, read)
	require.False(t, ok)
	ok, _ = step.check(at(321, 322, 322), running, read)
	require.False(t, ok)

	durable = 323 // the in-flight append lands
	ok, why := settle.check(at(322, 323, 323), running, read)
	require.False(t, ok, "master-0 has not applied batch 323")
	require.Equal(t, "master-0 at batch 322, waiting for batch 323", why)
	ok, _ = step.check(at(322, 323, 323), running, read)
	require.True(t, ok, "a step waits for what was durable when it began")

	ok, _ = settle.check(at(323, 323, 323), running, read)
	require.True(t, ok)

	// A node that is not running is not waited for; a target never moves
	// back, and an unreadable prefix leaves the primary's cursor.
	ok, _ = settle.check(at(100, 323, 323), []bool{false, true, true}, func() (uint64, error) { return 0, errors.New("etcd unreachable") })
	require.True(t, ok)
	fresh := catchUp{follow: true}
	ok, why = fresh.check(at(323, 320, 324), running, func() (uint64, error) { return 0, errors.New("etcd unreachable") })
	require.False(t, ok)
	require.Equal(t, "master-0 at batch 323, waiting for batch 324", why)
	ok, why = fresh.check([]client.Health{healthAt("master-0", 323, false)}, []bool{true}, read)
	require.False(t, ok)
	require.Equal(t, "no serving primary", why)
}
