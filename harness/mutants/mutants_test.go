package mutants

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every patch of the corpus parses, names a scenario that exists in the
// pr tier, and applies to today's tree.
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
	for _, pkg := range []string{"impl/oplog", "impl/publish", "impl/maintain", "impl/master", "impl/snapshot"} {
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
	out := []byte("FAIL x in 1s — bundle: /tmp/b (and /tmp/b.tar.gz)\n  ok   acknowledged-data  fine\n  FAIL keyspace-order     12 revisions\n       [pointer-fenced] rev 9: pointer written\n       [pointer-fenced] rev 10: again\n  FAIL minimum-work       x\n")
	ev, bundle := runEvidence(out)
	require.Equal(t, "/tmp/b", bundle)
	require.Equal(t, []string{"keyspace-order: [pointer-fenced] rev 9: pointer written", "minimum-work"}, ev)
}
