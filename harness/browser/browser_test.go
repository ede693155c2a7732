package browser_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/browser"
	"github.com/oplogha/oplogha/harness/browser/browsertest"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/bundle/bundletest"
)

// render writes run as a bundle, renders its report.html as the runner
// does, and returns the report's path.
func render(t *testing.T, run bundletest.Run) string {
	t.Helper()
	dir, err := run.Write(t.TempDir())
	require.NoError(t, err)
	b, err := bundle.Open(dir)
	require.NoError(t, err)
	require.NoError(t, b.WriteReport())
	return filepath.Join(dir, bundle.ReportFile)
}

// edit rewrites the report: old (which must be there) becomes new.
func edit(t *testing.T, report, old, new string) {
	t.Helper()
	html, err := os.ReadFile(report)
	require.NoError(t, err)
	require.Contains(t, string(html), old)
	require.NoError(t, os.WriteFile(report, []byte(strings.Replace(string(html), old, new, 1)), 0o644))
}

// check opens report with a screenshot next to it, and requires that the
// browser it started is gone when Check returns.
func check(t *testing.T, report string, o browser.Options) (*browser.Result, error) {
	t.Helper()
	if o.PNG == "" {
		o.PNG = filepath.Join(filepath.Dir(report), bundle.ScreenshotFile)
	}
	res, err := browser.Check(context.Background(), report, o)
	require.Empty(t, children(t), "Check left a process running")
	return res, err
}

// children are the live processes whose parent is this test binary.
func children(t *testing.T) []string {
	t.Helper()
	self := strconv.Itoa(os.Getpid())
	dirs, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", d.Name(), "status"))
		if err != nil {
			continue // gone meanwhile
		}
		var name, state, ppid string
		for _, line := range strings.Split(string(status), "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch k {
			case "Name":
				name = strings.TrimSpace(v)
			case "State":
				state = strings.TrimSpace(v)
			case "PPid":
				ppid = strings.TrimSpace(v)
			}
		}
		if ppid == self && !strings.HasPrefix(state, "Z") {
			out = append(out, d.Name()+" "+name)
		}
	}
	return out
}

// The fixture's report opens cleanly: no console problem, a timeline that
// draws the run, a row per audit, and a PNG of the whole page (taller than
// the window) next to report.html.
func TestFixtureReportOpensCleanly(t *testing.T) {
	browsertest.Need(t)
	run := bundletest.Small()
	report := render(t, run)
	res, err := check(t, report, browser.Options{})
	require.NoError(t, err)
	require.Equal(t, len(run.Results), res.AuditRows)
	require.Greater(t, res.Marks, len(run.Meta.Steps), "steps, faults, snapshots, roles and throughput are drawn")
	require.Equal(t, filepath.Join(filepath.Dir(report), bundle.ScreenshotFile), res.PNG)
	data, err := os.ReadFile(res.PNG)
	require.NoError(t, err)
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	require.NoError(t, err, "report.png is a PNG")
	require.GreaterOrEqual(t, cfg.Width, 1400, "as wide as the report")
	require.Greater(t, cfg.Height, 900, "the whole page, not only the window")
}

// Every check fails on its own fault, with a message that names it.
func TestBrokenReportsFail(t *testing.T) {
	browsertest.Need(t)
	cases := []struct {
		name   string
		run    func(*bundletest.Run)             // changes the bundle before rendering
		edit   func(t *testing.T, report string) // changes the rendered page
		want   browser.Kind
		detail string
	}{
		{name: "an uncaught script error", want: browser.Exception, detail: "injected failure",
			edit: func(t *testing.T, r string) {
				edit(t, r, "</body>", `<script>throw new Error("injected failure")</script></body>`)
			}},
		{name: "an error in a promise nobody awaits", want: browser.Exception, detail: "injected rejection",
			edit: func(t *testing.T, r string) {
				edit(t, r, "</body>", `<script>Promise.reject(new Error("injected rejection"))</script></body>`)
			}},
		{name: "a console error", want: browser.ConsoleError, detail: "console.error: injected console error",
			edit: func(t *testing.T, r string) {
				edit(t, r, "</body>", `<script>console.error("injected console error")</script></body>`)
			}},
		{name: "an image that does not load", want: browser.ResourceFailed, detail: "missing.png",
			edit: func(t *testing.T, r string) { edit(t, r, "</body>", `<img src="missing.png"></body>`) }},
		{name: "a run with nothing on its timeline", want: browser.EmptyTimeline, detail: "draws no step",
			run: func(r *bundletest.Run) { r.Meta.Steps, r.Events, r.Ops = nil, nil, nil }},
		{name: "no timeline", want: browser.NoTimeline, detail: "no element #timeline",
			edit: func(t *testing.T, r string) { edit(t, r, `<svg id="timeline"`, `<svg id="gone"`) }},
		{name: "a hidden timeline", want: browser.NoTimeline, detail: "laid out 0×0 px",
			edit: func(t *testing.T, r string) { edit(t, r, "</style>", "#timeline{display:none}</style>") }},
		{name: "a run without audits", want: browser.EmptyAuditTable, detail: "no visible tr.audit",
			run: func(r *bundletest.Run) { r.Results = nil }},
		{name: "no audit table", want: browser.NoAuditTable, detail: "no element #audits",
			edit: func(t *testing.T, r string) { edit(t, r, `<table id="audits">`, `<table>`) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := bundletest.Small()
			if c.run != nil {
				c.run(&run)
			}
			report := render(t, run)
			if c.edit != nil {
				c.edit(t, report)
			}
			res, err := check(t, report, browser.Options{})
			var re *browser.ReportError
			require.ErrorAs(t, err, &re)
			require.True(t, re.Has(c.want), "want a %q problem, got: %v", c.want, err)
			require.Contains(t, err.Error(), string(c.want)+": ")
			require.Contains(t, err.Error(), c.detail)
			require.Contains(t, err.Error(), report, "the message names the page")
			require.FileExists(t, res.PNG, "the picture is written even for a broken page")
		})
	}
}

// The check is bounded: a page that never finishes loading (an image read
// from a pipe nobody writes) ends at the timeout, which the error names,
// and the browser is stopped all the same.
func TestCheckIsBounded(t *testing.T) {
	browsertest.Need(t)
	report := render(t, bundletest.Small())
	require.NoError(t, syscall.Mkfifo(filepath.Join(filepath.Dir(report), "never.png"), 0o644))
	edit(t, report, "</body>", `<img src="never.png"></body>`)
	start := time.Now()
	_, err := check(t, report, browser.Options{Timeout: 5 * time.Second})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "not done within 5s")
	require.Less(t, time.Since(start), 30*time.Second)
}

// Without a browser the error says which binaries were looked for and how
// to install one.
func TestNoChromium(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	report := render(t, bundletest.Small())
	_, err := browser.Check(context.Background(), report, browser.Options{})
	require.True(t, errors.Is(err, browser.ErrNoChromium), "%v", err)
	require.Contains(t, err.Error(), browser.InstallHint)
}
