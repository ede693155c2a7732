package master

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/state"
)

// tenants is a YAML list and a comma-separated flag; the flag wins.
func TestTenantsFromFileAndFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	require.NoError(t, os.WriteFile(path, []byte("cluster_id: c\nlisten: 127.0.0.1:1\netcd_endpoints: [http://a:1]\ntenants: [alpha, \"\", beta]\n"), 0o644))
	c, err := LoadConfig([]string{"--config", path})
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "", "beta"}, c.Tenants, "the empty tenant can be listed in YAML")
	require.Empty(t, c.Validate())
	c, err = LoadConfig([]string{"--config", path, "--tenants", "gamma, delta"})
	require.NoError(t, err)
	require.Equal(t, []string{"gamma", "delta"}, c.Tenants)
	require.Empty(t, DefaultConfig().Tenants, "default: every tenant accepted")
	require.Contains(t, FlagHelp(), "tenants")
}

func TestInvalidTenantsAreRejected(t *testing.T) {
	for name, tc := range map[string]struct {
		tenants []string
		want    string
	}{
		"listed twice":   {[]string{"a", "b", "a"}, `tenants: "a" listed twice`},
		"over the bound": {[]string{strings.Repeat("t", state.MaxKeyBytes+1)}, "tenants: a name of 4097 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			c := validConfig()
			c.Tenants = tc.tenants
			errs := c.Validate()
			require.Len(t, errs, 1)
			require.Contains(t, errs[0].Error(), tc.want)
		})
	}
}

// The hostile-input errors have stable codes, statuses and a definite outcome.
func TestHostileInputCodes(t *testing.T) {
	for err, want := range map[error]codeRule{
		errTooLarge:        {code: "too_large", status: http.StatusRequestEntityTooLarge, outcome: OutcomeFailed},
		errUnknownTenant:   {code: "unknown_tenant", status: http.StatusForbidden, outcome: OutcomeFailed},
		state.ErrMalformed: {code: "malformed", status: http.StatusBadRequest, outcome: OutcomeFailed},
	} {
		got := classify(errors.Join(errors.New("context"), err))
		got.err = nil
		require.Equal(t, want, got, "%v", err)
	}
}

// A placement that fails part way, or whose put is refused, gives its space
// back when nothing was reserved after it.
func TestAllocatorReleasesRefusedPlacements(t *testing.T) {
	segs := []state.Segment{
		{Endpoint: "a", Name: "a", Capacity: 1000, Kind: state.ReplicaMemory},
		{Endpoint: "b", Name: "b", Capacity: 100, Kind: state.ReplicaMemory},
	}
	var a allocator
	_, err := a.place(segs, "t", "k", 500, 2)
	require.ErrorIs(t, err, errNoCapacity, "b cannot hold 500 bytes")
	require.Zero(t, a.next["a"], "the replica placed on a before b refused is given back")

	gen := a.generation()
	first, err := a.place(segs[:1], "t", "k1", 400, 1)
	require.NoError(t, err)
	second, err := a.place(segs[:1], "t", "k2", 400, 1)
	require.NoError(t, err)
	a.release(first, gen)
	require.Equal(t, uint64(800), a.next["a"], "a reservation followed by another stays")
	a.release(second, gen)
	require.Equal(t, uint64(400), a.next["a"], "the last reservation is given back")
	again, err := a.place(segs[:1], "t", "k3", 600, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(400), again[0].Offset)

	// After a rebuild (a promotion) the index comes from the state, which
	// may hold another primary's object over the range: nothing is given back.
	st := state.New()
	require.NoError(t, st.Apply(state.Batch{ID: 1, FirstSeq: 1, LastSeq: 2, Entries: []state.Entry{
		state.MountSegment(segs[0]),
		state.PutEnd("t", "other", state.Object{Size: 600,
			Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: "a", Offset: 400,
				Length: 600, Status: state.ReplicaComplete}}}),
	}}))
	a.rebuild(st.Capture())
	a.release(again, gen)
	require.Equal(t, uint64(1000), a.next["a"], "a release from before the rebuild is void")
}
