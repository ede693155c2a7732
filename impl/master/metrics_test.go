package master

import (
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

var fqName = regexp.MustCompile(`fqName: "(oplogha_[a-z_]+)"`)

// CONTRACT.md lists every series the master registers and nothing else,
// and the series the RFC's Observability section names are there.
func TestMetricsContract(t *testing.T) {
	ch := make(chan *prometheus.Desc, 512)
	newMetrics().reg.Describe(ch)
	close(ch)
	registered := map[string]bool{}
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			registered[m[1]] = true
		}
	}
	doc, err := os.ReadFile("CONTRACT.md")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`(oplogha_[a-z_]+)").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	var missing, stale []string
	for n := range registered {
		if !documented[n] {
			missing = append(missing, n)
		}
	}
	for n := range documented {
		if !registered[n] {
			stale = append(stale, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	require.Empty(t, missing, "registered but not in CONTRACT.md")
	require.Empty(t, stale, "in CONTRACT.md but not registered")
	for _, want := range []string{
		"oplogha_capacity_exhaustion_horizon_seconds",                        // estimated capacity exhaustion horizon
		"oplogha_snapshot_pointer_info", "oplogha_snapshot_pointer_batch_id", // fallback id, cursor
		"oplogha_snapshot_pointer_age_seconds", "oplogha_snapshot_pointer_verified", // age, validation status
		"oplogha_lease_losses_total",                      // maintenance lease loss
		"oplogha_snapshot_last_failed_phase",              // last failed phase
		"oplogha_snapshot_last_success_timestamp_seconds", // last successful snapshot
		"oplogha_snapshot_phase_seconds",                  // HEAD verification time (phase verify)
		"oplogha_capture_estimated_bytes_peak",            // peak estimated capture memory
		"oplogha_bootstrap_phase_seconds",                 // bootstrap download, decode, replay
	} {
		require.True(t, registered[want], "the RFC's Observability section asks for %s", want)
	}
}
