package retention

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/publish"
)

// Every way the snapshot the floor would move onto can be damaged stops
// the floor: each check of the validation is reached and must refuse. The
// damage is done behind the store (the file under the local store's root).
func TestEveryValidationFailureKeepsTheFloor(t *testing.T) {
	file := func(f *fixture, p publish.Pointer, name string) string {
		return filepath.Join(f.root, filepath.FromSlash(dir(p)+name))
	}
	type damage func(t *testing.T, f *fixture, p publish.Pointer)
	rewrite := func(name string, edit func(t *testing.T, b []byte) []byte) damage {
		return func(t *testing.T, f *fixture, p publish.Pointer) {
			data, err := os.ReadFile(file(f, p, name))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(file(f, p, name), edit(t, data), 0o644))
		}
	}
	remove := func(name string) damage {
		return func(t *testing.T, f *fixture, p publish.Pointer) { require.NoError(t, os.Remove(file(f, p, name))) }
	}
	replace := func(old, new string) func(*testing.T, []byte) []byte {
		return func(t *testing.T, b []byte) []byte {
			require.True(t, bytes.Contains(b, []byte(old)), "%s not in %s", old, b)
			return bytes.Replace(b, []byte(old), []byte(new), 1)
		}
	}
	flip := func(_ *testing.T, b []byte) []byte { b[len(b)/2] ^= 0x20; return b }
	garbage := func(*testing.T, []byte) []byte { return []byte("{not json") }
	cases := map[string]damage{
		"descriptor missing":              remove(batchsnap.DescriptorObject),
		"descriptor garbage":              rewrite(batchsnap.DescriptorObject, garbage),
		"descriptor disagrees":            rewrite(batchsnap.DescriptorObject, replace(`"producer_view_version":1`, `"producer_view_version":2`)),
		"manifest missing":                remove(batchsnap.ManifestObject),
		"manifest garbage":                rewrite(batchsnap.ManifestObject, garbage),
		"manifest disagrees":              rewrite(batchsnap.ManifestObject, replace(`"last_included_seq":`, `"last_included_seq":9`)),
		"payload object missing":          remove(batchsnap.SegmentsObject),
		"payload object truncated":        rewrite(batchsnap.SegmentsObject, func(_ *testing.T, b []byte) []byte { return b[:len(b)-1] }),
		"payload object same size, other": rewrite(batchsnap.SegmentsObject, flip),
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, 40)
			safe := f.snap(10)
			f.publish(safe)
			f.publish(f.snap(20))
			damage(t, f, safe)
			cache := &Verified{}
			rep, err := f.run(Options{Prefix: "snaps/m", Prune: true, Verified: cache})
			require.NoError(t, err)
			require.Contains(t, rep.Skipped, "failed validation")
			require.Zero(t, rep.Floor)
			require.Equal(t, int64(40), batchCount(t, f))
			require.False(t, cache.Has(safe.SnapshotID))
		})
		if name == "payload object same size, other" {
			continue // only a complete read sees it, and a cached latest is not read again
		}
		// The newer snapshot, verified once and cached, is checked by its
		// metadata only: each metadata check must refuse on its own.
		t.Run(name+" (latest, cached)", func(t *testing.T) {
			f := newFixture(t, 40)
			f.publish(f.snap(10))
			latest := f.snap(20)
			f.publish(latest)
			cache := &Verified{}
			cache.Add(latest.SnapshotID)
			damage(t, f, latest)
			rep, err := f.run(Options{Prefix: "snaps/m", Prune: true, Verified: cache})
			require.NoError(t, err)
			require.Contains(t, rep.Skipped, "failed validation")
			require.Contains(t, rep.Skipped, latest.SnapshotID)
			require.Zero(t, rep.Floor)
			require.Equal(t, int64(40), batchCount(t, f))
		})
	}
	t.Run("undamaged", func(t *testing.T) {
		f := newFixture(t, 40)
		safe := f.snap(10)
		f.publish(safe)
		f.publish(f.snap(20))
		cache := &Verified{}
		rep, err := f.run(Options{Prefix: "snaps/m", Prune: true, Verified: cache})
		require.NoError(t, err)
		require.Equal(t, uint64(10), rep.Floor)
		require.True(t, cache.Has(safe.SnapshotID), "a complete read is remembered")
	})
}

// The verification cache is bounded: the oldest id goes first.
func TestVerifiedCacheIsBounded(t *testing.T) {
	var v Verified
	for i := 0; i <= verifiedCap; i++ {
		v.Add(string(rune('a'+i%26)) + string(rune('0'+i/26)))
	}
	require.False(t, v.Has("a0"), "the first id was evicted at the cap")
	require.True(t, v.Has(string(rune('a'+verifiedCap%26))+string(rune('0'+verifiedCap/26))))
	v.Forget("b0")
	require.False(t, v.Has("b0"))
}

// Once the floor stands on the older snapshot, later cycles do not read it
// completely again: the full read is for a floor about to move.
func TestNoCompleteReadWhenTheFloorDoesNotMove(t *testing.T) {
	f := newFixture(t, 40)
	safe := f.snap(10)
	f.publish(safe)
	f.publish(f.snap(20))
	rep, err := f.run(Options{Prefix: "snaps/m", Prune: true, Verified: &Verified{}})
	require.NoError(t, err)
	require.Equal(t, uint64(10), rep.Floor)
	require.Contains(t, rep.Verified, safe.SnapshotID)
	rep, err = f.run(Options{Prefix: "snaps/m", Prune: true, Verified: &Verified{}})
	require.NoError(t, err)
	require.Equal(t, uint64(10), rep.Floor)
	require.Empty(t, rep.Verified, "the floor is already there: metadata only")
}

// GC keeps a group at S_new's own batch that is not S_new (a capture of
// the same batch whose publication may still be on its way).
func TestGCKeepsAGroupAtTheNewestBatch(t *testing.T) {
	f := newFixture(t, 40)
	f.publish(f.snap(10))
	f.publish(f.snap(20))
	twin := f.snap(20)
	rep, err := f.run(Options{Prefix: "snaps/m", GC: true, Now: func() time.Time { return time.Now().Add(time.Hour) }})
	require.NoError(t, err)
	require.Zero(t, rep.GCGroups)
	list, err := f.st.List(ctxT(t), dir(twin))
	require.NoError(t, err)
	require.NotEmpty(t, list, "the twin at S_new's batch is kept")
}

// The floor CAS tells a lost maintenance key from a floor that moved under it.
func TestFloorCASTellsLeaseLostFromConcurrentMove(t *testing.T) {
	f := newFixture(t, 40)
	l, err := publish.AcquireLease(ctxT(t), f.srv.Client, f.ks, "maintainer", 10)
	require.NoError(t, err)
	defer l.Release(context.Background())
	_, _, err = CASFloor(ctxT(t), f.srv.Client, f.ks, "someone-else", nil, 5, Pointers{})
	require.ErrorIs(t, err, ErrLeaseLost, "a token that is not the maintenance key's")
	floor, moved, err := CASFloor(ctxT(t), f.srv.Client, f.ks, l.Token, nil, 5, Pointers{})
	require.NoError(t, err)
	require.True(t, moved)
	require.Equal(t, uint64(5), floor)
	// a second writer of the same token that observed no floor loses to the move
	_, _, err = CASFloor(ctxT(t), f.srv.Client, f.ks, l.Token, nil, 7, Pointers{})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrLeaseLost, "the lease is held: the floor moved concurrently")
}
