package bundle_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/bundle/bundletest"
)

// report renders run as a bundle and returns its report.html.
func report(t *testing.T, run bundletest.Run) string {
	t.Helper()
	dir, err := run.Write(t.TempDir())
	require.NoError(t, err)
	b, err := bundle.Open(dir)
	require.NoError(t, err)
	require.NoError(t, b.WriteReport())
	html, err := os.ReadFile(filepath.Join(dir, bundle.ReportFile))
	require.NoError(t, err)
	return string(html)
}

var (
	originAttr = regexp.MustCompile(`<svg id="timeline" data-origin-ns="(\d+)" data-end-ns="(\d+)"`)
	tick       = regexp.MustCompile(`<text x="([\d.]+)" y="10" text-anchor="middle" fill="#57606a">([\d.]+)s</text>`)
	retention  = regexp.MustCompile(`<polyline points="([\d.]+),`)
)

// The timeline starts at the cluster's boot, not at the run's start (the
// harness builds binaries and starts processes before it, which no lane
// draws): the axis's origin is the boot note's time, the first tick at the
// left edge is the boot's second, and the retention series line up with it.
// It ends with the last thing recorded, not with the teardown after it.
func TestTimelineStartsAtTheBoot(t *testing.T) {
	run := bundletest.Small()
	html := report(t, run)
	m := originAttr.FindStringSubmatch(html)
	require.NotNil(t, m, "the timeline names its axis")
	boot, ok := bundle.BootAt(run.Events)
	require.True(t, ok)
	require.Equal(t, strconv.FormatInt(boot, 10), m[1], "the axis starts at the boot note")
	require.Equal(t, strconv.FormatInt(int64(bundletest.Collect), 10), m[2], "and ends with the last event, not the teardown")
	require.Greater(t, run.Meta.DurationMS*1e6, int64(bundletest.Collect))

	ticks := tick.FindAllStringSubmatch(html, -1)
	require.NotEmpty(t, ticks)
	require.Equal(t, []string{"150.0", "12"}, ticks[0][1:], "the first tick is the boot's second, at the left edge")
	require.Equal(t, "23", ticks[len(ticks)-1][2], "the last is the last event's second")
	require.Contains(t, html, "from boot at 12.0s")

	r := retention.FindAllStringSubmatch(html, -1)
	require.NotEmpty(t, r)
	for _, p := range r {
		require.Equal(t, "150.0", p[1], "a retention series starts at the boot too")
	}
}

// A run whose cluster never booted has no boot note: its axis starts at
// the run's start, so whatever it recorded is still drawn.
func TestTimelineWithoutABootStartsAtTheRunsStart(t *testing.T) {
	run := bundletest.Small()
	run.Events = run.Events[1:]
	_, ok := bundle.BootAt(run.Events)
	require.False(t, ok)
	html := report(t, run)
	m := originAttr.FindStringSubmatch(html)
	require.NotNil(t, m)
	require.Equal(t, "0", m[1])
	ticks := tick.FindAllStringSubmatch(html, -1)
	require.Equal(t, []string{"150.0", "0"}, ticks[0][1:])
	require.NotContains(t, html, "from boot at")
}

// A run that recorded nothing after its boot still gets an axis: to the
// run's end.
func TestTimelineOfARunThatRecordedNothingAfterItsBoot(t *testing.T) {
	run := bundletest.Small()
	run.Events, run.Meta.Steps, run.Ops, run.Retention = run.Events[:1], nil, nil, nil
	m := originAttr.FindStringSubmatch(report(t, run))
	require.NotNil(t, m)
	require.Equal(t, strconv.FormatInt(int64(bundletest.Boot), 10), m[1])
	require.Equal(t, strconv.FormatInt(run.Meta.DurationMS*1e6, 10), m[2])
}

// The report names the timeline, what it draws and the audit table's rows
// with the ids and classes a browser check looks for.
func TestReportHasStableNames(t *testing.T) {
	run := bundletest.Small()
	html := report(t, run)
	require.Contains(t, html, `id="`+bundle.TimelineID+`"`)
	require.Contains(t, html, `id="`+bundle.AuditsID+`"`)
	require.Equal(t, len(run.Results), strings.Count(html, `<tr class="`+bundle.AuditRow+`">`))
	for _, kind := range []string{"step", "fault", "snapshot", "role", "ops"} {
		require.Contains(t, html, `class="`+bundle.TimelineMark+` `+kind+`"`, kind)
	}
}

// TestReportFitsTheMasterKind: a master without a cursor, a bootstrap
// report or a state digest has none shown (no "batch 0 seq 0", no empty
// bootstrap or digest); the reference master's node line shows all three.
// A master's exits and its own warnings are on the report and in the
// summary.
func TestReportFitsTheMasterKind(t *testing.T) {
	summary := func(run bundletest.Run) string {
		dir, err := run.Write(t.TempDir())
		require.NoError(t, err)
		b, err := bundle.Open(dir)
		require.NoError(t, err)
		require.NoError(t, b.WriteSummary())
		md, err := os.ReadFile(filepath.Join(dir, bundle.SummaryFile))
		require.NoError(t, err)
		return string(md)
	}
	ref := summary(bundletest.Small())
	require.Regexp(t, `master-0: \w*, running=true, batch \d+ seq \d+, bootstrap \w*, digest`, ref)

	run := bundletest.Small()
	run.Meta.Master = "mooncake"
	up := summary(run)
	require.Contains(t, up, "master-0: ")
	for _, absent := range []string{"batch 0 seq 0", "bootstrap ,", "digest \n", ", digest"} {
		require.NotContains(t, up, absent)
	}

	run = bundletest.Small()
	run.Events = append(run.Events, audit.Event{At: int64(20 * time.Second), Kind: "exit", Name: audit.ExitOwn, Target: "master-1",
		Detail: "signal: aborted, 512ms after its start (pid 4242)", Log: []string{"terminate called after throwing an instance of 'std::runtime_error'"}})
	md := summary(run)
	require.Contains(t, md, "## Process exits")
	require.Contains(t, md, "20.00s master-1 exited on its own: signal: aborted, 512ms after its start (pid 4242)")
	require.Contains(t, md, "terminate called after throwing")
	html := report(t, run)
	require.Contains(t, html, "<h2>Process exits</h2>")
	require.Contains(t, html, "terminate called after throwing")
}
