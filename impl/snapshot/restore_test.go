package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/state"
)

// poisoned yields a capture's content with one object's memory replica
// given a file path, a field its kind does not have: it encodes (the
// encoder trusts its source) but no state can hold it.
type poisoned struct {
	c  *state.Capture
	at int
}

func (p poisoned) Cursor() state.Cursor                    { return p.c.Cursor() }
func (p poisoned) Len() (int, int)                         { return p.c.Len() }
func (p poisoned) Segments(yield func(state.Segment) bool) { p.c.Segments(yield) }

func (p poisoned) Objects(yield func(state.ObjectKey, state.Object) bool) {
	i := 0
	p.c.Objects(func(k state.ObjectKey, o state.Object) bool {
		if i == p.at {
			o.Replicas = append([]state.Replica(nil), o.Replicas...)
			o.Replicas[0].FilePath = "/not/a/memory/field"
		}
		i++
		return yield(k, o)
	})
}

// The builder runs on its own goroutine: its rejection of any object, in the
// first batch, a middle one or the last, still fails the whole restore.
func TestRestoreFailsOnTheBuildersRejection(t *testing.T) {
	s := buildState(t, 3*builderBatch+17)
	for _, at := range []int{0, builderBatch + 5, 3*builderBatch + 16} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "payload"))
			require.NoError(t, err)
			defer f.Close()
			_, err = Encode(poisoned{s.Capture(), at}, f, 1000)
			require.NoError(t, err)
			st, _, err := Restore(bytes.NewReader(readAll(t, f)))
			require.ErrorIs(t, err, state.ErrMalformed)
			require.Nil(t, st)
		})
	}
}
