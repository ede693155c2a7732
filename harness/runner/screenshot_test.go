package runner

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/browser"
	"github.com/oplogha/oplogha/harness/browser/browsertest"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/bundle/bundletest"
)

// With Screenshot, Finish opens the report in Chromium before it
// compresses the bundle: report.png is in the directory and the archive,
// and a report that is broken in the browser fails the outcome, saying
// why, while the audits keep their own verdicts.
func TestFinishScreenshotsTheReport(t *testing.T) {
	browsertest.Need(t)
	archived := func(t *testing.T, archive string) string {
		out, err := exec.Command("tar", "tzf", archive).Output()
		require.NoError(t, err)
		return string(out)
	}

	t.Run("a report that renders", func(t *testing.T) {
		dir, err := bundletest.Small().Write(t.TempDir())
		require.NoError(t, err)
		o, err := Finish(context.Background(), dir, Options{Keep: true, Screenshot: true})
		require.NoError(t, err)
		require.NoError(t, o.Err)
		require.FileExists(t, filepath.Join(dir, bundle.ScreenshotFile))
		require.Contains(t, archived(t, o.Archive), "fixture/"+bundle.ScreenshotFile)
	})
	t.Run("a report with nothing on its timeline", func(t *testing.T) {
		run := bundletest.Small()
		run.Meta.Steps, run.Events, run.Ops = nil, nil, nil
		dir, err := run.Write(t.TempDir())
		require.NoError(t, err)
		o, err := Finish(context.Background(), dir, Options{Screenshot: true})
		require.NoError(t, err)
		var re *browser.ReportError
		require.ErrorAs(t, o.Err, &re)
		require.True(t, re.Has(browser.EmptyTimeline), "%v", o.Err)
		require.True(t, strings.HasPrefix(o.Err.Error(), "report check: "), o.Err.Error())
		require.False(t, o.Pass, "a broken report fails the run")
		require.NotEmpty(t, o.Dir, "so its bundle is kept")
		require.Contains(t, archived(t, o.Archive), "fixture/"+bundle.ScreenshotFile, "with the picture of the problem")
	})
}
