package snapshot

import (
	"bufio"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/state"
)

// miscounted says it holds one object more than it yields.
type miscounted struct{ c *state.Capture }

func (m miscounted) Cursor() state.Cursor                    { return m.c.Cursor() }
func (m miscounted) Len() (int, int)                         { o, s := m.c.Len(); return o + 1, s }
func (m miscounted) Segments(yield func(state.Segment) bool) { m.c.Segments(yield) }
func (m miscounted) Objects(yield func(state.ObjectKey, state.Object) bool) {
	m.c.Objects(yield)
}

func spec(t *testing.T) PrepareSpec {
	return PrepareSpec{ID: NewID(1, 7), Prefix: "p/c/x", View: 1, WorkDir: t.TempDir(), ChunkObjects: 1000}
}

// The decode-check runs behind the encoder and reads the work file: what
// it accepts is exactly what Decode accepts from the finished file.
func TestPrepareChecksTheFileItWrote(t *testing.T) {
	for _, n := range []int{0, 1, 999, 1000, 25_000} {
		s := buildState(t, n)
		p, err := Prepare(s.Capture(), spec(t))
		require.NoError(t, err, "%d objects", n)
		_, st, err := Decode(bufio.NewReader(mustOpen(t, p.File.Name())), Visitor{})
		require.NoError(t, err)
		require.EqualValues(t, n, st.Objects)
		require.Equal(t, p.Layout.Size, st.Bytes)
		p.Close()
	}
}

// An encoder failure ends the check too, and nothing is left behind.
func TestPrepareFailsCleanly(t *testing.T) {
	s := buildState(t, 5000)
	sp := spec(t)
	p, err := Prepare(miscounted{s.Capture()}, sp)
	require.ErrorIs(t, err, ErrCount)
	require.Nil(t, p)
	left, err := os.ReadDir(sp.WorkDir)
	require.NoError(t, err)
	require.Empty(t, left, "work file removed")
}

func mustOpen(t *testing.T, name string) *os.File {
	f, err := os.Open(name)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}
