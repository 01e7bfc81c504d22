// Command gocuda inspects and exercises gocuda on this machine.
//
//	gocuda doctor            driver, devices, features, backend and knobs
//	gocuda replay TRACE...   run recorded allocation traces through the pools
//	gocuda bench             time allocate+free pairs through each pool
//
// Run "gocuda COMMAND --help" for a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"bench":  {"time cached allocate+free pairs through each pool, one goroutine and many", runBench},
		"doctor": {"show the driver, devices and features, the backend chosen and every GOCUDA_ knob as parsed", runDoctor},
		"replay": {"replay recorded allocation traces through the memory pools and compare them", runReplay},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "gocuda: GPU arrays for Go — inspect and exercise this machine")
	fmt.Fprintln(w, "\nUsage: gocuda COMMAND [flags] [args]\n\nCommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"gocuda COMMAND --help\" for a command's flags.")
}

// run is main without the exit, for tests. It returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(stderr, "gocuda: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	if err := cmd.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "gocuda %s: %v\n", name, err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is a mistake in how the command was typed (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// newFlags makes a command's flag set with a usage text naming the command.
func newFlags(name, args, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gocuda "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: gocuda %s %s\n\n%s\n", name, args, summary)
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
		if b.Len() > 0 {
			fmt.Fprintf(stderr, "\nFlags:\n%s", b.String())
		}
	}
	return fs
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
