package bundle

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/audit"
)

// A shrunk candidate's faults keep their original's anchors under their
// new step numbers; removed faults take theirs with them.
func TestReanchor(t *testing.T) {
	b := &Bundle{}
	b.Input.Events = []audit.Event{
		{Kind: "role", Target: "master-2", Detail: "starting → primary"},
		{Kind: "fault", OK: true, Anchor: &audit.Anchor{Step: 3, BatchID: 100, Targets: []string{"master-1"}}},
		{Kind: "fault", OK: true, Anchor: &audit.Anchor{Step: 6, BatchID: 250, Targets: []string{"master-0"}}},
		{Kind: "fault", OK: false, Anchor: &audit.Anchor{Step: 8}},
		{Kind: "role", Target: "master-1", Detail: "standby → primary"},
	}
	anchors, first := b.Anchors()
	require.Equal(t, "master-2", first)
	require.Len(t, anchors, 2)
	// The candidate kept original steps 1, 6 and 7 (step 3's fault removed).
	got := Reanchor(anchors, []int{1, 6, 7})
	require.Equal(t, map[int]audit.Anchor{2: {Step: 2, BatchID: 250, Targets: []string{"master-0"}}}, got)
}
