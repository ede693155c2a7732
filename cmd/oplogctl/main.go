// Command oplogctl is the operator's CLI for a cluster of batch-OpLog
// masters (the chaos CLI stays the harness's):
//
//	oplogctl legacy inspect DIR [--json]    what an import of a legacy snapshot would bring in; writes nothing
//	oplogctl reset check|delete|new-namespace  destructive reset of a cluster namespace
//	oplogctl snapshot inspect …             one batch-OpLog snapshot: identity, objects, checksums (--json: its content)
//	oplogctl verify --etcd URLS --cluster-id C  judge a live namespace: OpLog, prefix, floor, pointers, objects
//
// Exit status: 0 done; 1 the command ran and its verdict is a failure (or it
// could not run); 2 a usage error, with a message saying what is wrong.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one top-level command; each lives in its own file.
type command struct {
	name, usage string
	run         func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"legacy", legacyUsage, runLegacy},
		{"reset", resetUsage, runReset},
		{"snapshot", snapshotUsage, runSnapshot},
		{"verify", verifyUsage, runVerify},
	}
}

// usageError is a command line that is wrong: the command did not run.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errVerdict: the command printed its verdict, which is a failure.
var errVerdict = errors.New("verdict printed")

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: oplogctl COMMAND …")
	for _, c := range commands() {
		fmt.Fprintln(w, c.usage)
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs one command line and returns its exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		var ue usageError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "oplogctl %s: %v\n%s\n", c.name, ue.err, c.usage)
			return 2
		case errors.Is(err, errVerdict):
			return 1
		}
		fmt.Fprintf(stderr, "oplogctl %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(stderr, "oplogctl: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// parseFlags parses args with fs and returns the positional arguments;
// flags may come after them (oplogctl legacy inspect DIR --json). -h prints
// the flags to stdout and returns flag.ErrHelp; any other error is a usage
// error.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil, err
			}
			return nil, usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}
