// Package browsertest is the rule every test that opens a page in Chromium
// follows when there is no browser: skip, saying so, unless
// OPLOGHA_REQUIRE_BROWSER is set (CI sets it), then fail.
package browsertest

import (
	"testing"

	"github.com/oplogha/oplogha/harness/browser"
)

// Need returns Chromium's path, or skips t (fails it when the browser is
// required) with how to install it.
func Need(t testing.TB) string {
	t.Helper()
	path, err := browser.Find()
	if err == nil {
		return path
	}
	if browser.Required() {
		t.Fatalf("%v; %s is set, so the browser test fails instead of skipping", err, browser.RequireEnv)
	}
	t.Skipf("%v; skipping the browser test (set %s=1 to fail instead)", err, browser.RequireEnv)
	return ""
}
