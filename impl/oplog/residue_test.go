package oplog

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/state"
)

// A namespace whose history is gone while a view, a floor or a pointer is
// left is never read as an empty cluster, nor initialised as one: reading
// its head and claiming a view both fail with ErrResidue naming what is left.
func TestResidueIsNotAnEmptyCluster(t *testing.T) {
	srv := etcdtest.Start(t)
	ctx := ctxT(t)
	for name, residue := range map[string][]string{
		"view":     {"/producer_view"},
		"floor":    {"/snapshot/compaction_floor"},
		"pointers": {"/snapshot/latest", "/snapshot/fallback"},
		"all":      {"/producer_view", "/snapshot/compaction_floor", "/snapshot/latest"},
	} {
		t.Run(name, func(t *testing.T) {
			ks := keyspace.Must("residue-" + name)
			w := newWriter(t, srv.Client, ks)
			_, err := w.Append(ctx, []state.Entry{removeEntry(1)})
			require.NoError(t, err)
			values := map[string]string{"/producer_view": "7", "/snapshot/compaction_floor": string(Floor{BatchID: 100}.Encode())}
			for _, k := range residue {
				v := values[k]
				if v == "" {
					v = "a pointer left behind"
				}
				_, err := srv.Client.Put(ctx, ks.Root()+k, v)
				require.NoError(t, err)
			}
			// The history lost with the rest left in place.
			_, err = srv.Client.Delete(ctx, ks.DurablePrefix())
			require.NoError(t, err)
			_, err = srv.Client.Delete(ctx, ks.Batch(1))
			require.NoError(t, err)
			if name != "view" && name != "all" {
				_, err = srv.Client.Delete(ctx, ks.ProducerView())
				require.NoError(t, err)
			}

			_, err = (&Reader{KV: srv.Client, Keyspace: ks}).ReadHead(ctx)
			require.ErrorIs(t, err, ErrResidue)
			var re *ResidueError
			require.ErrorAs(t, err, &re)
			for _, k := range residue {
				require.Contains(t, re.Keys, ks.Root()+k)
			}
			_, err = ClaimProducerView(ctx, srv.Client, ks)
			require.ErrorIs(t, err, ErrResidue)
			resp, err := srv.Client.Get(ctx, ks.DurablePrefix())
			require.NoError(t, err)
			require.Empty(t, resp.Kvs, "no zero prefix was written over the residue")
		})
	}
	t.Run("fresh", func(t *testing.T) {
		ks := keyspace.Must("residue-fresh")
		h, err := (&Reader{KV: srv.Client, Keyspace: ks}).ReadHead(ctx)
		require.NoError(t, err)
		require.False(t, h.Present)
		_, err = ClaimProducerView(ctx, srv.Client, ks)
		require.NoError(t, err)
	})
}

// A head read racing the first claim of a fresh namespace never mistakes
// the claim for residue: the view and the zero prefix are written together
// and judged at one revision.
func TestFreshNamespaceRacingItsFirstClaimIsNotResidue(t *testing.T) {
	srv := etcdtest.Start(t)
	ctx := ctxT(t)
	for i := 0; i < 40; i++ {
		ks := keyspace.Must(fmt.Sprintf("race-%d", i))
		done := make(chan error, 1)
		go func() {
			_, err := ClaimProducerView(ctx, srv.Client, ks)
			done <- err
		}()
		r := &Reader{KV: srv.Client, Keyspace: ks}
		for j := 0; j < 20; j++ {
			_, err := r.ReadHead(ctx)
			require.NoError(t, err, "namespace %d, read %d", i, j)
		}
		require.NoError(t, <-done)
	}
}

// A zero durable prefix beside residue is refused like an absent one: a
// floor, a pointer, an import record, or a producer view older than the
// zero prefix (a claim writes the two together) is what a history left,
// and the reader must not take the namespace for an empty cluster. A zero
// prefix with a view claimed with it, or after it, is a fresh cluster.
func TestZeroPrefixBesideResidueIsNotAnEmptyCluster(t *testing.T) {
	srv := etcdtest.Start(t)
	ctx := ctxT(t)
	zero := string(DurablePrefix{}.Encode())
	for name, tc := range map[string]struct {
		residue []string
		want    []string // residue keys the error names (nil: no error)
	}{
		"floor and pointers": {[]string{"/snapshot/compaction_floor", "/snapshot/latest", "/snapshot/fallback"},
			[]string{"/snapshot/compaction_floor", "/snapshot/latest", "/snapshot/fallback"}},
		"pointer only":               {[]string{"/snapshot/latest"}, []string{"/snapshot/latest"}},
		"view older than the prefix": {[]string{"/producer_view"}, []string{"/producer_view"}},
		"view claimed with it":       {nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			ks := keyspace.Must("zero-" + strings.ReplaceAll(name, " ", "-"))
			// A history, then its residue, then the reset that went half-way.
			w := newWriter(t, srv.Client, ks)
			_, err := w.Append(ctx, []state.Entry{removeEntry(1)})
			require.NoError(t, err)
			for _, k := range tc.residue {
				v := "a pointer left behind"
				if k == "/snapshot/compaction_floor" {
					v = string(Floor{BatchID: 1}.Encode())
				}
				if k != "/producer_view" {
					_, err := srv.Client.Put(ctx, ks.Root()+k, v)
					require.NoError(t, err)
				}
			}
			_, err = srv.Client.Delete(ctx, ks.Batch(1))
			require.NoError(t, err)
			if !slices.Contains(tc.residue, "/producer_view") {
				_, err = srv.Client.Delete(ctx, ks.ProducerView())
				require.NoError(t, err)
			}
			_, err = srv.Client.Put(ctx, ks.DurablePrefix(), zero)
			require.NoError(t, err)
			if tc.want == nil {
				// A fresh claim: the view written with (here: after) the zero prefix.
				_, err = srv.Client.Put(ctx, ks.ProducerView(), "1")
				require.NoError(t, err)
			}

			h, err := (&Reader{KV: srv.Client, Keyspace: ks}).ReadHead(ctx)
			if tc.want == nil {
				require.NoError(t, err)
				require.True(t, h.Present)
				return
			}
			require.ErrorIs(t, err, ErrResidue)
			var re *ResidueError
			require.ErrorAs(t, err, &re)
			for _, k := range tc.want {
				require.Contains(t, re.Keys, ks.Root()+k)
			}
		})
	}
}
