package mutants

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every patch of the corpus parses, names a scenario that exists in the
// pr tier (TestEveryMutantApplies: and applies to today's tree).
func TestCorpusParsesAndNamesRealScenarios(t *testing.T) {
	corpus, err := Load("../../tests/mutants")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(corpus), 25, "the corpus keeps at least 25 mutants")
	wheres := map[string]bool{}
	for _, m := range corpus {
		for _, sc := range m.Scenarios {
			_, err := os.Stat(filepath.Join("../../scenarios/pr", sc+".yaml"))
			require.NoError(t, err, "%s names scenario %s", m.Name, sc)
		}
		wheres[m.Where] = true
	}
	for _, pkg := range []string{"impl/oplog", "impl/publish", "impl/retention", "impl/master", "impl/snapshot"} {
		require.True(t, wheres[pkg], "no mutant in %s", pkg)
	}
}

func TestHeaderIsRequired(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.patch")
	require.NoError(t, os.WriteFile(p, []byte("# where: impl/oplog\n# story: s\ndiff --git a/f b/f\n"), 0o644))
	_, err := Parse(p)
	require.ErrorIs(t, err, ErrHeader, "no scenario named")
	require.NoError(t, os.WriteFile(p, []byte("# where: impl/oplog\n# story: s\n# scenarios: smoke\n# colour: red\ndiff --git a/f b/f\n"), 0o644))
	_, err = Parse(p)
	require.ErrorIs(t, err, ErrHeader, "unknown key")
}

func TestRunEvidence(t *testing.T) {
	out := []byte("FAIL x in 1s — bundle: /tmp/b (and /tmp/b.tar.gz)\n  ok   acknowledged-data  fine\n" +
		"  FAIL keyspace-order     12 revisions\n       [pointer-fenced] rev 9: pointer written\n" +
		"       [pointer-fenced] rev 10: again\n  FAIL minimum-work       x\n")
	ev, bundle := runEvidence(out)
	require.Equal(t, "/tmp/b", bundle)
	require.Equal(t, []string{"keyspace-order: [pointer-fenced] rev 9: pointer written", "minimum-work"}, ev)
}

func TestReplayEvidence(t *testing.T) {
	out := []byte("replaying smoke seed 7 from /tmp/b (2 faults anchored to the original's events)\n" +
		"FAIL smoke in 80.1s — bundle: /tmp/r/smoke-7 (and smoke-7.tar.gz)\n" +
		"  FAIL keyspace-order     1 violation\n" +
		"       [pointers-monotonic] rev 99: fallback written\n" +
		"  same  step 3 kill master-0: on event 12\n" +
		"  DIFF  step 5 partition master-1: landed on event 40, not 38\n" +
		"1 of 2 faults landed on the original's event\n" +
		"REPRODUCED: the replay fails first on keyspace-order, as the original did\n" +
		"fault timeline: the same 4 fault and heal events as the original\n")
	rp := replayEvidence(out)
	require.True(t, rp.Reproduced)
	require.Equal(t, "keyspace-order", rp.Was)
	require.Equal(t, "keyspace-order", rp.Now)
	require.Equal(t, "REPRODUCED: the replay fails first on keyspace-order, as the original did", rp.Verdict)
	require.Equal(t, "1 of 2 faults landed on the original's event", rp.Landed)
	require.Equal(t, "fault timeline: the same 4 fault and heal events as the original", rp.Timeline)
	require.Equal(t, "/tmp/r/smoke-7", rp.Bundle)
	require.Equal(t, "reproduced (keyspace-order)", rp.Cell())

	rp = replayEvidence([]byte("NOT reproduced: the original failed first on recovery-source, the replay on " +
		"\"minimum-work\"\nfault timeline DIFFERS from the original:\n  x\n"))
	require.False(t, rp.Reproduced)
	require.Equal(t, "recovery-source", rp.Was)
	require.Equal(t, "minimum-work", rp.Now)
	require.Equal(t, "fault timeline DIFFERS from the original", rp.Timeline)
	require.Equal(t, "not (first failing recovery-source vs minimum-work)", rp.Cell())

	rp = replayEvidence([]byte("NOT reproduced: the original failed first on linearizability, the replay on \"\"\n"))
	require.False(t, rp.Reproduced)
	require.Equal(t, "", rp.Now)
	require.Equal(t, "not (first failing linearizability vs none: the replay passed)", rp.Cell())

	rp = replayEvidence([]byte("chaos replay: x: not a bundle\n"))
	require.False(t, rp.Reproduced)
	require.Equal(t, "", rp.Verdict, "no verdict line: the runner says why")
}

func TestTableWithReplayColumn(t *testing.T) {
	os := []Outcome{
		{Mutant: "m1", Where: "impl/oplog", Verdict: Killed, By: "scenario smoke", Replay: &Replay{Reproduced: true, Was: "keyspace-order", Now: "keyspace-order"}},
		{Mutant: "m2", Where: "impl/oplog", Verdict: Killed, By: "scenario smoke", Replay: &Replay{Was: "objects", Now: "minimum-work"}},
		{Mutant: "m3", Where: "impl/oplog", Verdict: Survived},
	}
	tab := Table(os)
	require.Contains(t, tab, "| what failed | replay | time |")
	require.Contains(t, tab, "| reproduced (keyspace-order) |")
	require.Contains(t, tab, "| not (first failing objects vs minimum-work) |")
	require.Equal(t, "1 of 2 failures reproduced by replay (50 %)", ReplaySummary(os))
	require.NotContains(t, Table(os[2:]), "replay", "no replay column without --replay")
	require.Equal(t, "", ReplaySummary(os[2:]))
}

// Every mutant still applies to the tree: a patch whose context moved
// (the code it breaks was rewritten) would fail to build its mutant and
// count as a harness error in make mutants, a day later than here.
func TestEveryMutantApplies(t *testing.T) {
	corpus, err := Load("../../tests/mutants")
	require.NoError(t, err)
	for _, m := range corpus {
		path, err := filepath.Abs(m.Path)
		require.NoError(t, err)
		cmd := exec.Command("git", "apply", "--check", path)
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s no longer applies (regenerate it from a committed tree): %s", m.Name, out)
	}
}
