package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrNoChromium: no Chromium binary on PATH.
var ErrNoChromium = errors.New("no chromium on PATH")

// InstallHint says how to install the browser on the project's machines
// (Debian), for the messages of the commands and tests that need it.
const InstallHint = "apt-get install -y chromium"

// RequireEnv names the variable that turns a missing Chromium from a
// skipped browser test into a failed one (CI sets it: a report nobody
// opened must not pass as tested).
const RequireEnv = "OPLOGHA_REQUIRE_BROWSER"

// Required reports whether RequireEnv is set.
func Required() bool { return os.Getenv(RequireEnv) != "" }

// names are the binaries tried in order: Debian's package, then the names
// other distributions give it.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns the path of the Chromium binary, or an error wrapping
// ErrNoChromium that says how to install it.
func Find() (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (tried %s): %s", ErrNoChromium, strings.Join(names, ", "), InstallHint)
}

// Version is the browser's version number ("156.0.8078.114" of "Chromium
// 156.0.8078.114 built on Debian…"), for the tool listing.
func Version(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", path, err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return "", fmt.Errorf("%s --version: unexpected %q", path, out)
	}
	return f[1], nil
}
