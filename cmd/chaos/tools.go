package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/oplogha/oplogha/harness/bin"
)

func cmdTools(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	path := fs.String("path", "", "build (if needed) only this tool and print its path")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cache, err := bin.NewCache(".", os.Stderr)
	if err != nil {
		return err
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
	return nil
}
