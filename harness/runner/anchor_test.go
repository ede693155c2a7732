package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
)

// A replayed fault landed where its original did only when it hit the same
// nodes and nothing diverged on the way.
func TestCheckLanding(t *testing.T) {
	orig := audit.Anchor{Step: 3, BatchID: 243, Targets: []string{"master-2"}}
	same := checkLanding("kill", orig, audit.Anchor{Step: 3, BatchID: 250, Targets: []string{"master-2"}}, "")
	require.True(t, same.Same)
	require.Contains(t, same.Detail, "batch 250 (the original at 243)")
	other := checkLanding("kill", orig, audit.Anchor{Step: 3, BatchID: 250, Targets: []string{"master-0"}}, "")
	require.False(t, other.Same)
	require.Contains(t, other.Detail, "the original hit [master-2]")
	late := checkLanding("kill", orig, audit.Anchor{Step: 3, BatchID: 200, Targets: []string{"master-2"}},
		"the durable prefix reached only batch 200 of the original's 243")
	require.False(t, late.Same)
	require.Contains(t, late.Detail, "reached only batch 200")
}

// A corruption of the same slot's same object lands on the same event
// whatever the snapshot's id and the byte flipped; another slot or object
// does not.
func TestCheckLandingMasksRunSpecificIDs(t *testing.T) {
	orig := audit.Anchor{Step: 6, BatchID: 270, Targets: []string{"latest 270-8943923/objects/0.bin byte 7666"}}
	now := audit.Anchor{Step: 6, BatchID: 341, Targets: []string{"latest 341-9121312/objects/0.bin byte 9619"}}
	c := checkLanding("corrupt-snapshot", orig, now, "")
	require.True(t, c.Same, c.Detail)
	require.Contains(t, c.Detail, "the same slot and object")
	now.Targets = []string{"fallback 341-9121312/objects/0.bin byte 9619"}
	require.False(t, checkLanding("corrupt-snapshot", orig, now, "").Same)
	now.Targets = []string{"latest 341-9121312/segments.bin byte 9"}
	require.False(t, checkLanding("corrupt-snapshot", orig, now, "").Same)
}

// A revoked writer lease is the same node's whatever its lease id and
// writer token; another node's is not.
func TestCheckLandingMasksLeaseAndToken(t *testing.T) {
	orig := audit.Anchor{Step: 6, BatchID: 769, Targets: []string{"master-1/7913a2421f0a09fb/6238e10c10b03fe89a912125"}}
	now := audit.Anchor{Step: 6, BatchID: 769, Targets: []string{"master-1/4123a2421f599032/663150386202856b1fc797c4"}}
	c := checkLanding("revoke-lease", orig, now, "")
	require.True(t, c.Same, c.Detail)
	now.Targets = []string{"master-0/4123a2421f599032/663150386202856b1fc797c4"}
	require.False(t, checkLanding("revoke-lease", orig, now, "").Same)
}

// A link fault's `as` names the node whose links it cut, so waits and
// later faults can name that node; a fault on several nodes' links names none.
func TestNodeOfALinkFault(t *testing.T) {
	r := &run{injected: map[string]*faults.Injected{
		"cut": {Spec: faults.Spec{Kind: "link-down", Target: "primary", Link: "{target}.etcd-*"},
			Targets: []string{"master-1.etcd-0", "master-1.etcd-1", "master-1.etcd-2"}},
		"s3":    {Spec: faults.Spec{Kind: "link-down", Link: "master-*.s3"}, Targets: []string{"master-0.s3", "master-1.s3"}},
		"crash": {Spec: faults.Spec{Kind: "kill", Target: "primary"}, Targets: []string{"master-2"}},
	}, healed: map[string]*faults.Injected{}}
	n, ok := r.nodeOf("cut")
	require.True(t, ok)
	require.Equal(t, "master-1", n)
	n, ok = r.nodeOf("crash")
	require.True(t, ok)
	require.Equal(t, "master-2", n)
	_, ok = r.nodeOf("s3")
	require.False(t, ok)
	_, ok = r.nodeOf("nothing")
	require.False(t, ok)
}
