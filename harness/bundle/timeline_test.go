package bundle

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A replay runs the bundle's re-marshalled scenario.yaml, so an unnamed
// fault's step-<line> name differs from the original's; a named one, a
// different kind or a different fault still differs.
func TestDiffTimelinesUnnamedFaults(t *testing.T) {
	was := []TimelineEntry{{Kind: "fault", Fault: "revoke-lease", As: "step-41"}, {Kind: "fault", Fault: "kill", As: "victim"}}
	now := []TimelineEntry{{Kind: "fault", Fault: "revoke-lease", As: "step-56"}, {Kind: "fault", Fault: "kill", As: "victim"}}
	require.Empty(t, DiffTimelines(was, now))
	now[0].Fault = "kill"
	require.NotEmpty(t, DiffTimelines(was, now))
	now[0].Fault, now[1].As = "revoke-lease", "other"
	require.NotEmpty(t, DiffTimelines(was, now))
	now[1].As = "step-9"
	require.NotEmpty(t, DiffTimelines(was, now), "a named fault is not an unnamed one")
}
