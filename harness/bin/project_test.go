package bin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every run gets its own copy of the command built from the tree, each
// with the SHA-256 of what it holds; the build itself lives once under the
// tree's .cache/build.
func TestBuildProjectCopiesOneBuildPerRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root, err := ProjectRoot(".")
	require.NoError(t, err)
	c := &Cache{Dir: t.TempDir(), Root: root}
	dir := t.TempDir()
	var sums []string
	for _, run := range []string{"run-1", "run-2"} {
		out := filepath.Join(dir, run, "peerswitch")
		sum, err := c.BuildProject(ctx, "./cmd/peerswitch", out)
		require.NoError(t, err)
		require.True(t, isExecutable(out), "%s is not an executable", out)
		require.Equal(t, fileSHA(t, out), sum, "the sum names what the run holds")
		sums = append(sums, sum)
	}
	require.Equal(t, sums[0], sums[1])
	require.FileExists(t, filepath.Join(root, ".cache", "build", "peerswitch"))
}

// SHA256 remembers a file's sum only while its size and time stay the same.
func TestSHA256FollowsTheFile(t *testing.T) {
	c := &Cache{}
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("one"), 0o644))
	first, err := c.SHA256(p)
	require.NoError(t, err)
	require.Equal(t, fileSHA(t, p), first)
	require.NoError(t, os.WriteFile(p, []byte("other"), 0o644))
	require.NoError(t, os.Chtimes(p, time.Now(), time.Now().Add(time.Hour)))
	second, err := c.SHA256(p)
	require.NoError(t, err)
	require.Equal(t, fileSHA(t, p), second)
	require.NotEqual(t, first, second)
	_, err = c.SHA256(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func fileSHA(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
