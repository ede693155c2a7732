// Package browser opens a bundle's report.html in headless Chromium, as a
// person would, and says whether it shows what it must: no uncaught script
// error, console error or failed load, a timeline that draws the run and an
// audit table with a row per audit. It writes a full-page PNG of what it
// saw, so a reader (and CI's uploaded bundle) has the picture too.
package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultTimeout bounds one check, from the browser's start to its exit.
// A report opens in about a second; the bound is for a loaded machine.
const DefaultTimeout = time.Minute

// viewport is the window the page is laid out in: wide enough for the
// report's 1400 px body and its margins. The screenshot is as tall as the
// page.
const viewportW, viewportH = 1480, 900

// Options configure a check.
type Options struct {
	// PNG is where the full-page screenshot goes ("": none). It is written
	// even when the page has problems: the picture shows them.
	PNG string
	// Timeout bounds the whole check (0: DefaultTimeout).
	Timeout time.Duration
	// Chromium is the browser's binary ("": Find).
	Chromium string
}

// Result is what the browser saw.
type Result struct {
	PNG       string // the screenshot written ("" when none was asked for)
	Marks     int    // marks of the run the timeline shows
	AuditRows int    // rows of the audit table
}

// Check opens the report at path in headless Chromium and checks it. The
// error is a *ReportError when the page loaded but has problems (the
// Result is returned with it), and wraps ErrNoChromium when there is no
// browser. Chromium is stopped before Check returns, whatever happened.
func Check(ctx context.Context, path string, o Options) (*Result, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	exe := o.Chromium
	if exe == "" {
		if exe, err = Find(); err != nil {
			return nil, err
		}
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// As root in a container Chromium's sandbox cannot start; the page is
	// the harness's own file.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(viewportW, viewportH))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	con := newConsole()
	// The deferred cancels kill the browser and wait for it and its
	// children to exit.
	tab, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(con.listen))
	defer cancelTab()

	page := (&url.URL{Scheme: "file", Path: abs}).String()
	if err := chromedp.Do(tab, chromedp.Navigate(page)); err != nil {
		return nil, fmt.Errorf("open %s in %s: %w", path, exe, timedOut(err, timeout))
	}
	p, err := chromedp.Run(tab, chromedp.Evaluate[probe](probeJS))
	if err != nil {
		return nil, fmt.Errorf("measure %s: %w", path, timedOut(err, timeout))
	}
	res := &Result{Marks: p.Marks, AuditRows: p.Rows}
	if o.PNG != "" {
		if err := screenshot(tab, o.PNG); err != nil {
			return nil, fmt.Errorf("screenshot of %s: %w", path, timedOut(err, timeout))
		}
		res.PNG = o.PNG
	}
	// The probe's and the screenshot's replies came after every event the
	// page caused while loading: the console has seen them all.
	if problems := append(con.found(), p.problems()...); len(problems) > 0 {
		return res, &ReportError{Page: path, Problems: problems}
	}
	return res, nil
}

// timedOut names the bound when err is the check running out of time.
func timedOut(err error, timeout time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("not done within %v: %w", timeout, err)
	}
	return err
}
