package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gocuda/gocuda/internal/suggest"
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"bench":   {"time the pools (allocate+free pairs), copies between devices (peer), all-reduce across GPUs (allreduce), FFTs (fft) or matrix products (gemm)", runBench},
		"doctor":  {"show the driver, devices and features, the backend chosen and every GOCUDA_ knob as parsed", runDoctor},
		"launch":  {"start N ranks of a program on this machine and serve the rendezvous where they meet (as torchrun --standalone)", runLaunch},
		"replay":  {"replay recorded allocation traces through the memory pools and compare them", runReplay},
		"status":  {"show each device's memory and pool usage (PoolStatus), after an optional warm-up", runStatus},
		"version": {"show gocuda's version, Go's, the CUDA driver's and the CUDA libraries found", runVersion},
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
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			// "gocuda help replay" is "gocuda replay --help".
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	cmds := commands()
	cmd, ok := cmds[name]
	if !ok {
		names := make([]string, 0, len(cmds))
		for n := range cmds {
			names = append(names, n)
		}
		fmt.Fprintf(stderr, "gocuda: unknown command %q%s\n\n", name, withHelp(didYouMean(name, names, ""), "gocuda --help", ""))
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
			if !strings.Contains(err.Error(), "--help") {
				fmt.Fprintf(stderr, "run \"gocuda %s --help\" for its flags and arguments\n", name)
			}
			return 2
		}
		return 1
	}
	return 0
}

// didYouMean returns `; did you mean "X"?` for the candidate nearest to
// typed (prefix added to both, as in "--"), or "" when none is near: at
// most a third of the word's letters changed, swapped, added or dropped.
func didYouMean(typed string, candidates []string, prefix string) string {
	best := suggest.Nearest(typed, candidates)
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", prefix+best)
}

// usageError is a mistake in how the command was typed (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// flags is a command's flag set that answers --help on stdout and turns
// parse errors into usage errors naming the nearest flag.
type flags struct {
	*flag.FlagSet
	name, args, summary string
	stdout              io.Writer
}

// newFlags makes a command's flag set. Help goes to stdout (it was asked
// for); errors come back from parse for run to print.
func newFlags(name, args, summary string, stdout io.Writer) *flags {
	fs := flag.NewFlagSet("gocuda "+name, flag.ContinueOnError)
	// The flag package prints its own error and the usage on a bad flag;
	// parse reports it instead, with a suggestion.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, name: name, args: args, summary: summary, stdout: stdout}
}

func (f *flags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: gocuda %s %s\n\n%s\n", f.name, f.args, f.summary)
	var b strings.Builder
	f.SetOutput(&b)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	if b.Len() > 0 {
		fmt.Fprintf(w, "\nFlags:\n%s", b.String())
	}
}

// parse parses args. --help prints the usage to stdout and returns
// flag.ErrHelp (exit 0); a mistake returns a usageError saying what to
// type instead.
func (f *flags) parse(args []string) error {
	err := f.Parse(args)
	if err == nil {
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		f.usage(f.stdout)
		return err
	}
	msg, suggestion := f.mistake(err, args)
	return usageErrorf("%s%s", msg, withHelp(suggestion, "gocuda "+f.name+" --help", " for its flags"))
}

// The flag package's messages, which parse rewords.
var (
	flagUnknown  = regexp.MustCompile(`^flag provided but not defined: -(.+)$`)
	flagNoValue  = regexp.MustCompile(`^flag needs an argument: -(.+)$`)
	flagBadValue = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?-([^:]+): (.*)$`)
	flagSyntax   = regexp.MustCompile(`^bad flag syntax: (.*)$`)
)

// mistake rewords the flag package's error err about args: the flag as
// it was typed (the package writes -x for both -x and --x), and what the
// flag accepts instead of the parser's words ("parse error"). suggestion
// is the nearest flag, for an unknown one.
func (f *flags) mistake(err error, args []string) (msg, suggestion string) {
	// Parse stops at the first mistake, leaving the arguments after it.
	read := args[:len(args)-len(f.Args())]
	msg = err.Error()
	if m := flagUnknown.FindStringSubmatch(msg); m != nil {
		typed := typedFlag(read, m[1])
		var known []string
		f.VisitAll(func(fl *flag.Flag) { known = append(known, fl.Name) })
		return fmt.Sprintf("unknown flag %q", typed), didYouMean(m[1], known, strings.TrimSuffix(typed, m[1]))
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s needs a value", typedFlag(read, m[1])), ""
	}
	if m := flagBadValue.FindStringSubmatch(msg); m != nil {
		value, _ := strconv.Unquote(m[1]) // %q's output
		return fmt.Sprintf("%s %q %s", typedFlag(read, m[2]), value, notA(f.Lookup(m[2]), m[3])), ""
	}
	if m := flagSyntax.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%q is not a flag: a flag is -name or --name", m[1]), ""
	}
	return msg, ""
}

// typedFlag is flag name as it was typed in read ("-x" or "--x"), the
// last argument that names it; "--name" when none does.
func typedFlag(read []string, name string) string {
	for i := len(read) - 1; i >= 0; i-- {
		a, _, _ := strings.Cut(read[i], "=")
		if t := strings.TrimLeft(a, "-"); t == name && len(a)-len(t) <= 2 && len(a) > len(t) {
			return a
		}
	}
	return "--" + name
}

// notA says what a flag's refused value is not, from the flag's type:
// the flag package's own reason is "parse error". why is that reason, kept
// for a flag of a type of its own (flag.Func), whose errors are ours.
func notA(fl *flag.Flag, why string) string {
	if why == "value out of range" {
		return "is out of range"
	}
	var v any
	if fl != nil {
		if g, ok := fl.Value.(flag.Getter); ok {
			v = g.Get()
		}
	}
	switch v.(type) {
	case time.Duration:
		return "is not a duration: use forms like 300ms, 2s or 1m30s"
	case int, int64:
		return "is not a whole number"
	case uint, uint64:
		return "is not a whole number of 0 or more"
	case float64:
		return "is not a number"
	case bool:
		return "is not true or false"
	}
	return "is not valid: " + why
}

// withHelp ends a message with a suggestion, if any, and the help to run:
// `; did you mean "status"? run "gocuda --help"`.
func withHelp(suggestion, help, what string) string {
	if suggestion == "" {
		return fmt.Sprintf("; run %q%s", help, what)
	}
	return fmt.Sprintf("%s run %q%s", suggestion, help, what)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
