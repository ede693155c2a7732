package runner

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSampleValue(t *testing.T) {
	body := "# HELP x\noplogha_orphans_total{reason=\"conflict\"} 2\noplogha_orphans_total{reason=\"lease_lost\"} 3\noplogha_floor 7\n"
	for sample, want := range map[string]float64{
		"oplogha_orphans_total":                       5,
		`oplogha_orphans_total{reason="lease_lost"}`:  3,
		`oplogha_orphans_total{reason="below_floor"}`: 0,
		"oplogha_floor":                               7,
		"oplogha_missing":                             0,
	} {
		got, err := sampleValue(body, sample)
		require.NoError(t, err)
		require.Equal(t, want, got, sample)
	}
}
