package main

import (
	"context"
	"io"
)

const legacyUsage = `  oplogctl legacy inspect DIR [--json] [--cluster-id C] [--snapshot ID]
      what an import of a legacy primary snapshot would bring in (segments, objects, what is skipped and why); writes nothing`

// runLegacy dispatches the legacy commands: those about the primary
// snapshots upstream's master wrote before the batch OpLog.
func runLegacy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("want a subcommand: inspect")
	}
	switch args[0] {
	case "inspect":
		return legacyInspect(ctx, args[1:], stdout)
	}
	return usagef("unknown subcommand %q: want inspect", args[0])
}
