package localdir_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/objstore/localdir"
)

// A directory has no multipart uploads: GC finds none to abort, and the
// temporary files of an unfinished put are not listed as uploads.
func TestNoUploads(t *testing.T) {
	st, err := localdir.New(t.TempDir())
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, st.PutIfAbsent(ctx, "gc/a.bin", bytes.NewReader([]byte("x")), 1, 0))
	ups, err := st.ListUploads(ctx, "")
	require.NoError(t, err)
	require.Empty(t, ups)
	require.NoError(t, st.AbortUpload(ctx, "gc/a.bin", "any"), "a missing upload is not an error")
	_, err = st.Head(ctx, "gc/a.bin")
	require.NoError(t, err, "aborting touches no object")
}
