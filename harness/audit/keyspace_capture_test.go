package audit

import (
	"testing"

	"github.com/stretchr/testify/require"
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
