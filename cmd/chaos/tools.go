package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/browser"
	"github.com/oplogha/oplogha/harness/docker"
)

func cmdTools(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	path := fs.String("path", "", "build (if needed) only this tool and print its path; chromium: find it")
	images := fs.Bool("images", false, "also build the docker runtime's images (FROM scratch around each tool, once per version; needs a Docker engine)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cache, err := bin.NewCache(".", os.Stderr)
	if err != nil {
		return err
	}
	if *path == "chromium" {
		// Chromium is Debian's package, not built here: its path, or the
		// error that says how to install it.
		p, err := browser.Find()
		if err != nil {
			return err
		}
		fmt.Println(p)
		return nil
	}
	if *path != "" {
		b, err := cache.Path(ctx, *path)
		if err != nil {
			return err
		}
		fmt.Println(b.Path)
		return nil
	}
	bins, err := cache.All(ctx)
	if err != nil {
		return err
	}
	for _, b := range bins {
		fmt.Printf("%-10s %-10s %s\n", b.Name, b.Version, b.Path)
	}
	if err := listChromium(ctx); err != nil {
		return err
	}
	if !*images {
		return nil
	}
	if err := docker.Available(ctx); err != nil {
		return fmt.Errorf("images: %w", err)
	}
	for _, b := range bins {
		if b.Name == "gotestsum" {
			continue // a test runner, never in a cluster
		}
		sum, err := bin.FileSHA256(b.Path)
		if err != nil {
			return err
		}
		ref := docker.ImageRef(b.Name, b.Version)
		built, took, err := docker.EnsureImage(ctx, ref, b.Path, sum, nil)
		if err != nil {
			return err
		}
		state := "reused"
		if built {
			state = fmt.Sprintf("built in %v", took.Round(time.Millisecond))
		}
		fmt.Printf("image %-28s %s\n", ref, state)
	}
	return nil
}

// listChromium lists the browser that opens report.html (chaos run
// --screenshot, make demo, the browser tests). A Debian package, not a
// pinned build: when it is missing this says how to install it, and fails
// when OPLOGHA_REQUIRE_BROWSER is set.
func listChromium(ctx context.Context) error {
	path, err := browser.Find()
	if err != nil {
		if browser.Required() {
			return fmt.Errorf("%w (%s is set)", err, browser.RequireEnv)
		}
		fmt.Fprintf(os.Stderr, "chromium   missing: %s (for report.png; the browser tests skip without it)\n", browser.InstallHint)
		return nil
	}
	v, err := browser.Version(ctx, path)
	if err != nil {
		return err
	}
	fmt.Printf("%-10s %-10s %s\n", "chromium", v, path)
	return nil
}
