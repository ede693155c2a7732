package browser

import (
	"context"
	"fmt"
	"os"

	"github.com/chromedp/chromedp"
)

// screenshot writes the whole page, not only the window, as a PNG.
func screenshot(tab context.Context, path string) error {
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
