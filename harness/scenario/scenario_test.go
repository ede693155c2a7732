package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEveryScenarioFileLoads(t *testing.T) {
	var files []string
	require.NoError(t, filepath.Walk("../../scenarios", func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	}))
	require.NotEmpty(t, files)
	for _, f := range files {
		sc, err := Load(f)
		require.NoError(t, err, f)
		require.NotEmpty(t, sc.Steps)
		for _, st := range sc.Steps {
			require.Positive(t, st.Line, "%s: step lines are recorded", f)
		}
	}
}

func TestProblemsCarryLineNumbers(t *testing.T) {
	src := `name: bad
tier: pr
steps:
  - wait: {for: primary}
  - fault: {kind: explode, target: primary}
  - heal: nothing
  - sleep: 1s
    traffic: stop
  - wait: {for: role}
  - restart: {target: everything, mode: gentle}
  - probe: {keys: 3}
  - wait: {for: suffix}
  - wait: {for: maintenance}
expect:
  audits: [acknowledged-data, vibes]
`
	_, err := Parse([]byte(src))
	var le *LoadError
	require.ErrorAs(t, err, &le)
	joined := strings.Join(le.Problems, "\n")
	for _, want := range []string{
		`line 5: step 2: fault kind "explode"`,
		`line 6: step 3: heal "nothing": no earlier fault`,
		`line 7: step 4: exactly one of`,
		`line 9: step 5: wait for role needs node and role`,
		`line 10: step 6: restart target "everything"`,
		`line 10: step 6: restart mode "gentle"`,
		"line 11: step 7: probe needs node",
		"line 12: step 8: wait for suffix needs batches > 0",
		"line 13: step 9: wait for maintenance needs node",
		`unknown audit "vibes"`,
	} {
		require.Contains(t, joined, want)
	}
}

func TestUnknownFieldsAreRejectedWithTheirLine(t *testing.T) {
	_, err := Parse([]byte("name: x\ntier: pr\nstepz: []\n"))
	require.ErrorContains(t, err, "line 3")
	require.ErrorContains(t, err, "stepz")
}

func TestDefaultsAndRoundTrip(t *testing.T) {
	sc, err := Parse([]byte("name: x\ntier: nightly\nsteps:\n  - sleep: 2s\n"))
	require.NoError(t, err)
	require.Equal(t, 3, sc.Cluster.Etcd)
	require.Equal(t, 3, sc.Cluster.Masters)
	require.Equal(t, int64(1), sc.Seed)
	out, err := sc.Marshal()
	require.NoError(t, err)
	again, err := Parse(out)
	require.NoError(t, err, "%s", out)
	require.Equal(t, sc.Seed, again.Seed)
	require.Equal(t, sc.Steps[0].Sleep, again.Steps[0].Sleep)
}

// A `covers:` entry under an RFC section must name one of its rows, so a typo
// cannot silently leave a row uncovered; other notes go under "Also:".
func TestCoversNameRealRFCRows(t *testing.T) {
	sections := map[string]bool{}
	for _, r := range RFCRows {
		sections[r.Section] = true
	}
	files, err := filepath.Glob("../../scenarios/pr/*.yaml")
	require.NoError(t, err)
	var scs []*Scenario
	for _, f := range files {
		sc, err := Load(f)
		require.NoError(t, err)
		scs = append(scs, sc)
		for _, c := range sc.Covers {
			sec, _, _ := strings.Cut(c, ":")
			if !sections[sec] {
				continue
			}
			matched := false
			for _, r := range RFCRows {
				matched = matched || strings.HasPrefix(strings.ToLower(c), strings.ToLower(r.String()))
			}
			require.True(t, matched, "%s: %q names no row of %s", f, c, sec)
		}
	}
	require.NotEmpty(t, Coverage(scs)[Row{"Failure Semantics", "Latest snapshot corrupt"}])
}

func TestLegacyImportAndRefusalSteps(t *testing.T) {
	src := `name: bad-import
tier: pr
cluster:
  legacy_import: {cluster_id: old}
  config: {snapshot_bootstrap_mode: legacy-import}
steps:
  - assert: {refuses: {config: {enable_oplog: false}}}
`
	_, err := Parse([]byte(src))
	var le *LoadError
	require.ErrorAs(t, err, &le)
	joined := strings.Join(le.Problems, "\n")
	for _, want := range []string{
		"cluster.legacy_import.root: required",
		"cluster.legacy_import needs cluster.s3",
		"cluster.config.snapshot_bootstrap_mode: set cluster.legacy_import instead",
		"line 7: step 1: assert refuses needs config",
	} {
		require.Contains(t, joined, want)
	}
	sc, err := Parse([]byte(`name: ok
tier: pr
cluster:
  s3: versitygw
  legacy_import: {root: fixtures/legacy/small, cluster_id: mooncake_cluster}
steps:
  - assert: {refuses: {config: {enable_oplog: false}, says: "removed"}}
`))
	require.NoError(t, err)
	out, err := sc.Marshal()
	require.NoError(t, err)
	again, err := Parse(out)
	require.NoError(t, err, "%s", out)
	require.Equal(t, "fixtures/legacy/small", again.Cluster.LegacyImport.Root)
	require.Equal(t, "removed", again.Steps[0].Assert.Refuses.Says)
}
