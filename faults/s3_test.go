package faults

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/snapshot"
)

// occupyEnv is keyEnv with one master and its work directory.
type occupyEnv struct {
	*keyEnv
	work string
}

func (e occupyEnv) Masters() []string { return []string{"master-1"} }

func (e occupyEnv) WorkDir(string) (string, error) { return e.work, nil }

// occupy-prefix puts its stray object under the prefix of the one attempt
// the master has prepared (named by its work file, as impl/snapshot names
// it), at the latest pointer's root; with no attempt, or two, it says so.
func TestOccupyPrefixTakesThePreparedAttemptsPrefix(t *testing.T) {
	ctx := context.Background()
	e := occupyEnv{keyEnv: newKeyEnv(t, 1), work: t.TempDir()}
	_, err := e.EtcdPut(ctx, e.at("snapshot/latest"), validPointer(t, 3, "snapshots/chaos"))
	require.NoError(t, err)

	_, err = Inject(ctx, e, Spec{Kind: "occupy-prefix", Target: "master-1"})
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "master-1 has 0 prepared attempts")

	work := filepath.Join(e.work, snapshot.WorkFilePrefix+"17-4242-98765"+snapshot.WorkFileSuffix)
	require.NoError(t, os.WriteFile(work, nil, 0o644))
	in, err := Inject(ctx, e, Spec{Kind: "occupy-prefix", Target: "master-1"})
	require.NoError(t, err)
	key := batchsnap.Artifacts("snapshots/chaos", "17-4242").ObjectChunk(0)
	require.Equal(t, []string{"master-1 " + key}, in.Targets)
	f, err := e.StoreFile(key)
	require.NoError(t, err)
	require.FileExists(t, f)

	require.NoError(t, os.WriteFile(filepath.Join(e.work, snapshot.WorkFilePrefix+"18-4242-1"+snapshot.WorkFileSuffix), nil, 0o644))
	_, err = Inject(ctx, e, Spec{Kind: "occupy-prefix", Target: "master-1"})
	require.ErrorContains(t, err, "has 2 prepared attempts")
}
