package faults

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// families are the files kinds are registered from.
var families = map[string]bool{"process": true, "network": true, "failpoint": true, "etcd": true, "s3": true, "data": true, "workdir": true}

// Every registered kind is whole, and every spec the swarm draws from it,
// for every shape it applies to, is one that validation accepts.
func TestEveryKindIsWholeAndDrawsValidSpecs(t *testing.T) {
	require.NotEmpty(t, Kinds())
	shapes := []Shape{
		{Etcd: 1, Masters: 2},
		{Etcd: 3, Masters: 3, Snapshots: true, Retention: true, StoreFiles: true, Mount: true},
		{Etcd: 3, Masters: 2, Snapshots: true, Docker: true},
		{Etcd: 3, Masters: 3, PeerPairs: true},
	}
	r := rand.New(rand.NewPCG(1, 2))
	drawn := map[string]bool{}
	for _, k := range Kinds() {
		require.True(t, families[k.Family], "%s: family %q has no file", k.Name, k.Family)
		require.NotEmpty(t, k.Doc, k.Name)
		got, ok := Lookup(k.Name)
		require.True(t, ok)
		require.Same(t, k, got)
		for _, sh := range shapes {
			for range 50 {
				s, ok := k.Draw(r, sh)
				if !ok {
					require.True(t, k.draw == nil || k.Available(sh) != nil, "%s: applies to %+v but drew nothing", k.Name, sh)
					continue
				}
				drawn[k.Name] = true
				require.Equal(t, k.Name, s.Kind)
				require.NoError(t, s.Validate(), "%s drew %+v", k.Name, s)
			}
		}
	}
	for _, k := range Kinds() {
		require.Equal(t, k.draw != nil, drawn[k.Name], "%s: a kind with a draw is drawn for some shape, one without says why (%q)", k.Name, k.NotDrawn)
	}
}

// A kind that does not apply to a shape says so as ErrUnavailable, naming
// itself, and never draws there.
func TestAvailableNamesTheKindAndWhy(t *testing.T) {
	bare := Shape{Etcd: 1, Masters: 2}
	for _, name := range []string{"disconnect", "workdir-full", "corrupt-snapshot", "revoke-lease", "corrupt-pointer"} {
		k, ok := Lookup(name)
		require.True(t, ok, name)
		err := k.Available(bare)
		require.ErrorIs(t, err, ErrUnavailable, name)
		require.Contains(t, err.Error(), name)
		_, drew := k.Draw(rand.New(rand.NewPCG(3, 4)), bare)
		require.False(t, drew, name)
	}
	k, _ := Lookup("kill")
	require.NoError(t, k.Available(bare))
}

func TestDamagingComesFromTheRegistry(t *testing.T) {
	for _, name := range []string{"corrupt-pointer", "corrupt-snapshot", "corrupt-batch", "garbage", "lose-history"} {
		require.True(t, Damaging(name), name)
	}
	for _, name := range []string{"kill", "toxic", "failpoint", "revoke-lease", "compact-defrag", "workdir-full", "no-such-kind"} {
		require.False(t, Damaging(name), name)
	}
}

func TestUnknownKindIsRefusedWithTheList(t *testing.T) {
	err := Spec{Kind: "explode"}.Validate()
	require.ErrorContains(t, err, `fault kind "explode": want one of blackhole, compact-defrag, corrupt-batch`)
}

func TestDocsListEveryKind(t *testing.T) {
	doc, err := os.ReadFile("../docs/faults.md")
	require.NoError(t, err)
	require.Contains(t, string(doc), Markdown(), "docs/faults.md's kinds table is stale: paste faults.Markdown() (chaos list --faults --markdown)")
}
