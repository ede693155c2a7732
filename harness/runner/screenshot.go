package runner

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/oplogha/oplogha/harness/browser"
	"github.com/oplogha/oplogha/harness/bundle"
)

// checkReport opens the bundle's report.html in headless Chromium and
// writes report.png beside it (also when the page has problems: the
// picture shows them); the error lists what the browser found wrong.
func checkReport(ctx context.Context, dir string) error {
	_, err := browser.Check(ctx, filepath.Join(dir, bundle.ReportFile), browser.Options{PNG: filepath.Join(dir, bundle.ScreenshotFile)})
	if err != nil {
		return fmt.Errorf("report check: %w", err)
	}
	return nil
}
