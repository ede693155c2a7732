package master

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gofail "go.etcd.io/gofail/runtime"
)

// return("hold") holds the caller at the failpoint until the failpoint is
// cleared, and gofail counts the hit as soon as the caller arrives: a
// harness waits for the count, acts in the window, then releases.
func TestHoldFailpoint(t *testing.T) {
	require.NoError(t, gofail.Enable("snapshotBeforeCAS", `1*return("hold")`))
	t.Cleanup(func() { _ = gofail.Disable("snapshotBeforeCAS") })
	done := make(chan bool)
	go func() { done <- hit(fpSnapshotBeforeCAS) }()
	require.Eventually(t, func() bool { return holding[fpSnapshotBeforeCAS].Load() == 1 },
		5*time.Second, 5*time.Millisecond, "the caller is held")
	_, n, err := gofail.Status("snapshotBeforeCAS")
	require.NoError(t, err)
	require.Equal(t, 1, n, "the hit is counted while held")
	select {
	case <-done:
		t.Fatal("the caller went on while the failpoint held it")
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, gofail.Disable("snapshotBeforeCAS"))
	select {
	case fired := <-done:
		require.False(t, fired, "a hold injects nothing: the caller goes on as if the failpoint were off")
	case <-time.After(5 * time.Second):
		t.Fatal("the caller was not released")
	}
}

// appendMinEntries keeps the append path's failpoints from firing, or
// counting, for batches smaller than its value: 1*return(true) lands on
// the first batch of at least 3 entries.
func TestAppendMinEntriesGatesTheAppendFailpoints(t *testing.T) {
	require.NoError(t, gofail.Enable("primaryAfterAppend", `1*return(true)`))
	t.Cleanup(func() { _ = gofail.Disable("primaryAfterAppend") })
	require.NoError(t, gofail.Enable("appendMinEntries", `return(3)`))
	t.Cleanup(func() { _ = gofail.Disable("appendMinEntries") })
	require.False(t, hitBatch(fpPrimaryAfterAppend, 1))
	require.False(t, hitBatch(fpPrimaryAfterAppend, 2))
	_, n, err := gofail.Status("primaryAfterAppend")
	require.NoError(t, err)
	require.Zero(t, n, "batches below the minimum are not counted")
	require.True(t, hitBatch(fpPrimaryAfterAppend, 3))
	require.False(t, hitBatch(fpPrimaryAfterAppend, 5), "1*: fired once")

	require.NoError(t, gofail.Disable("appendMinEntries"))
	require.NoError(t, gofail.Enable("primaryAfterAppend", `1*return(true)`))
	require.True(t, hitBatch(fpPrimaryAfterAppend, 1), "without the gate every batch counts")
}
