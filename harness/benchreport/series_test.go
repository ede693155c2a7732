package benchreport

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSeriesRecordLoadAndDraw(t *testing.T) {
	dir := t.TempDir()
	figures := filepath.Join(dir, "figures.jsonl")
	t.Setenv(EnvOut, figures)
	require.NoError(t, Record(Figure{Group: "failover", Name: "failover p99", Value: 2100, Unit: "ms"}))
	s := Series{Group: "failover", Name: "failover-sigkill", Title: "Ack latency <across> a failover", XLabel: "s", YLabel: "ms",
		Points: []Point{{X: -1, Y: 4, Class: "master-1"}, {X: -0.5, Y: 6, Class: "master-1"}, {X: 2.1, Y: 30, Class: "master-2"}},
		Marks:  []Mark{{X: 0, Label: "fault"}, {X: 2, Label: "lease TTL"}}}
	require.NoError(t, RecordSeries(s))
	require.ErrorIs(t, RecordSeries(Series{Name: "../escape"}), ErrBadSeriesName)

	figs, err := Load(figures)
	require.NoError(t, err)
	series, err := LoadSeries(figures)
	require.NoError(t, err)
	require.Equal(t, []Series{s}, series)
	out := filepath.Join(dir, "out")
	require.NoError(t, Write(out, Meta{GoVersion: "go", Host: "h", CPUs: 2}, figs, series))

	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "![Ack latency <across> a failover](failover-sigkill.svg)")
	svg, err := os.ReadFile(filepath.Join(out, "failover-sigkill.svg"))
	require.NoError(t, err)
	// well-formed XML, one circle per point (plus one legend dot per class),
	// one dashed line per mark, the title escaped
	var doc struct{ XMLName xml.Name }
	require.NoError(t, xml.Unmarshal(svg, &doc))
	require.Equal(t, "svg", doc.XMLName.Local)
	require.Equal(t, len(s.Points)+2, strings.Count(string(svg), "<circle"))
	require.Equal(t, len(s.Marks), strings.Count(string(svg), "stroke-dasharray"))
	require.Contains(t, string(svg), "Ack latency &lt;across&gt; a failover")
}

func TestLoadSeriesRefusesABadName(t *testing.T) {
	figures := filepath.Join(t.TempDir(), "figures.jsonl")
	require.NoError(t, os.WriteFile(SeriesPath(figures), []byte(`{"name":"../../etc/x"}`+"\n"), 0o644))
	_, err := LoadSeries(figures)
	require.ErrorIs(t, err, ErrBadSeriesName)
	none, err := LoadSeries(filepath.Join(t.TempDir(), "figures.jsonl"))
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestTicksCoverTheRange(t *testing.T) {
	for _, r := range [][2]float64{{0, 1}, {-1.5, 5.2}, {0, 2300}, {0.001, 0.004}, {3, 3}} {
		ts := ticks(r[0], r[1])
		require.GreaterOrEqual(t, len(ts), 2, "%v", r)
		require.LessOrEqual(t, ts[0], r[0], "%v", r)
		require.GreaterOrEqual(t, ts[len(ts)-1], r[1], "%v", r)
		require.LessOrEqual(t, len(ts), 12, "%v: %v", r, ts)
	}
}
