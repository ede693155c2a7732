package master

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The production binary carries no sabotage: the failpoint that makes a
// primary acknowledge without appending exists only in a build with the
// sabotage tag.
func TestProductionBinaryHasNoSabotage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the master twice")
	}
	for _, f := range Failpoints {
		require.NotEqual(t, "brokenAckWithoutAppend", f.Name, "this test binary is built without the sabotage tag")
	}
	dir := t.TempDir()
	build := func(tags ...string) []byte {
		out := filepath.Join(dir, "master")
		args := append([]string{"build", "-o", out}, tags...)
		cmd := exec.Command("go", append(args, "../../cmd/master")...)
		msg, err := cmd.CombinedOutput()
		require.NoError(t, err, string(msg))
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		return data
	}
	require.False(t, bytes.Contains(build(), []byte("brokenAckWithoutAppend")), "a release build has no sabotage failpoint")
	require.True(t, bytes.Contains(build("-tags", "sabotage"), []byte("brokenAckWithoutAppend")), "the sabotage build does")
}
