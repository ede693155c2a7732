package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/masterkind"
)

func TestRequiresDeclaredAndImplied(t *testing.T) {
	sc, err := Parse([]byte(`
name: r
tier: pr
requires: [view-fencing]
cluster:
  s3: versitygw
  config: {leader_lease_seconds: 2}
  failpoints: {standbyBeforeApply: "sleep(60)"}
steps:
  - fault: {kind: failpoint, target: primary, name: primaryBeforeAppend, term: '1*return("hold")'}
    as: held
  - wait: {for: caught-up}
  - wait: {for: metric, metric: {node: any, sample: x, min: 1}}
  - assert: {bootstrap_source: [oplog]}
expect:
  recovery_source: [latest]
`))
	require.NoError(t, err)
	var got []string
	for _, c := range sc.Requires() {
		got = append(got, string(c))
	}
	assert.Equal(t, []string{"bootstrap-report", "cursor", "failpoint-term:hold", "failpoint-term:sleep",
		"failpoint:primaryBeforeAppend", "failpoint:standbyBeforeApply", "project-config", "project-metrics",
		"snapshots", "view-fencing"}, got)
	assert.Empty(t, masterkind.Reference().SkipReason(sc.Requires()))
	assert.Contains(t, masterkind.Mooncake().SkipReason(sc.Requires()), "master mooncake lacks bootstrap-report, cursor")
}

func TestPortableScenarioRequiresNothing(t *testing.T) {
	sc, err := Parse([]byte(`
name: p
tier: upstream
steps:
  - fault: {kind: kill, target: primary}
    as: crash
  - wait: {for: primary, excluding: crash}
expect:
  recovery_source: [oplog, empty]
`))
	require.NoError(t, err)
	assert.Empty(t, sc.Requires())
}

func TestBadMasterAndRequiresRefused(t *testing.T) {
	_, err := Parse([]byte(`
name: b
tier: pr
requires: [snapshots, teleportation, "failpoint:"]
cluster: {master: etcd}
`))
	require.Error(t, err)
	assert.ErrorContains(t, err, `cluster.master: master kind "etcd": want reference or mooncake`)
	assert.ErrorContains(t, err, `requires: "teleportation": not a capability`)
	assert.ErrorContains(t, err, `requires: "failpoint:": not a capability`)
	assert.NotContains(t, err.Error(), `"snapshots"`)
}
