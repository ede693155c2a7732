package audit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/history"
)

// standby-captured judges only what it can tie to nodes, and counts the
// rest by reason.
func TestStandbyCapturedAttributes(t *testing.T) {
	build := func(advertised map[string]string, resign bool) *Input {
		r := goodHistory()
		r.candidate(0x100, "http://a")
		r.claim(3)      // a, the leader, claims view 3
		r.appendBatch() // 7, appended by a
		if resign {
			r.resign(0x100)
			r.candidate(0x200, "http://b")
		}
		r.lease(2) // the publisher: token node/2/token
		r.advertised = advertised
		r.publish(7, 2, 3)
		return r.input()
	}
	// A standby published: the primary of batch 7 was another node.
	res := KeyspaceOrder(build(map[string]string{"http://a": "other"}, false))
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["standby-captured"])

	// The primary of batch 7 lost the leadership before it published: it
	// may have captured as a standby since; not judged, counted.
	res = KeyspaceOrder(build(map[string]string{"http://a": "node"}, true))
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["standby-captured: published by the primary of its batch after it lost the leadership (not judged)"])

	// The primary of batch 7 published it while it still led: it captured
	// as the primary (a violation) — unless the harness had ended its
	// process at a revision it could not read (etcd unreachable then): its
	// new process may have captured as a standby, so nothing is judged.
	res = KeyspaceOrder(build(map[string]string{"http://a": "node"}, false))
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[standby-captured]")
	in := build(map[string]string{"http://a": "node"}, false)
	in.Events = append(in.Events, Event{Kind: "fault", Name: "kill", Ended: []string{"node"},
		EtcdRevisionNote: "etcd's revision unknown: etcd unreadable for 2s"})
	res = KeyspaceOrder(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["standby-captured: published by a node the harness ended at a revision it could not read (not judged)"])

	// Without the advertise_url → node_id map nothing is tied, nothing guessed.
	res = KeyspaceOrder(build(nil, false))
	require.True(t, res.Pass, evidence0(res))
	require.Zero(t, res.Exercised["standby-captured"])
	require.Equal(t, 1, res.Exercised["standby-captured: pointer writes whose primary cannot be tied to a node (no advertise_url → node_id)"])

	// The election's leader changed before the old primary's last append
	// (its lease expired, it did not know yet): the batch is the old
	// primary's, whose view it was appended under, not the new leader's,
	// which may have captured it as a standby before its promotion.
	r := goodHistory()
	r.candidate(0x100, "http://a")
	r.claim(3) // a claims view 3
	r.candidate(0x200, "http://b")
	r.resign(0x100) // b leads from here
	r.appendBatch() // 7: a's last append, under view 3
	r.lease(2)      // b's maintenance lease (token node/2/token)
	r.advertised = map[string]string{"http://a": "old", "http://b": "node"}
	r.publish(7, 2, 3)
	res = KeyspaceOrder(r.input())
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["standby-captured"])
}

func TestParseToken(t *testing.T) {
	node, lease, ok := parseToken("master-0/6e90a247925e9f2a/d2290847399b7f22eba38f61")
	require.True(t, ok)
	require.Equal(t, "master-0", node)
	require.Equal(t, int64(0x6e90a247925e9f2a), lease)
	node, _, ok = parseToken("a/b/1f/x")
	require.True(t, ok)
	require.Equal(t, "a/b", node)
	_, _, ok = parseToken("no-token")
	require.False(t, ok)
}

// ack-from-view-holder: an acknowledgement from a batch appended under a
// view another node claimed fails; one from its own view passes; what
// cannot be tied is counted, never guessed.
func TestAckFromViewHolder(t *testing.T) {
	build := func(ackBy string, batch uint64, advertised map[string]string) *Input {
		r := newRevs()
		r.candidate(0x100, "http://a")
		r.claim(1)      // a claims view 1
		r.appendBatch() // 1, a's
		r.resign(0x100)
		r.candidate(0x200, "http://b")
		r.claim(2)      // b claims view 2
		r.appendBatch() // 2: under b's view (a zombie's append the view compare should have refused)
		r.advertised = advertised
		in := r.input()
		in.Ops = []history.Op{{Kind: history.Put, Tenant: "t", Key: "k", Outcome: history.OK, Node: ackBy, BatchID: batch, Complete: 9}}
		return in
	}
	nodes := map[string]string{"http://a": "master-0", "http://b": "master-1"}
	res := KeyspaceOrder(build("master-0", 2, nodes))
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[ack-from-view-holder] put t/k acknowledged at 0.000s by master-0 from batch 2, "+
		"appended under producer view 2, which master-1 claimed")

	res = KeyspaceOrder(build("master-1", 2, nodes))
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["ack-from-view-holder"])
	res = KeyspaceOrder(build("master-0", 1, nodes))
	require.True(t, res.Pass, evidence0(res))

	res = KeyspaceOrder(build("master-0", 2, nil))
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["ack-from-view-holder: acknowledgements whose view holder cannot be tied to a node (no advertise_url → node_id)"])
	res = KeyspaceOrder(build("master-0", 0, nodes))
	require.Equal(t, 1, res.Exercised["ack-from-view-holder: acknowledgements that name no batch"])
}
