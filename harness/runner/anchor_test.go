package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/audit"
)

// A replayed fault landed where its original did only when it hit the same
// nodes and nothing diverged on the way.
func TestCheckLanding(t *testing.T) {
	orig := audit.Anchor{Step: 3, BatchID: 243, Targets: []string{"master-2"}}
	same := checkLanding("kill", orig, audit.Anchor{Step: 3, BatchID: 250, Targets: []string{"master-2"}}, "")
	require.True(t, same.Same)
	require.Contains(t, same.Detail, "batch 250 (the original at 243)")
	other := checkLanding("kill", orig, audit.Anchor{Step: 3, BatchID: 250, Targets: []string{"master-0"}}, "")
	require.False(t, other.Same)
	require.Contains(t, other.Detail, "the original hit [master-2]")
	late := checkLanding("kill", orig, audit.Anchor{Step: 3, BatchID: 200, Targets: []string{"master-2"}}, "the durable prefix reached only batch 200 of the original's 243")
	require.False(t, late.Same)
	require.Contains(t, late.Detail, "reached only batch 200")
}
