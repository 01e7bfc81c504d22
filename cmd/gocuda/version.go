package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/gocuda/gocuda/cuda"
)

// modulePath is gocuda's module, whose version version reports.
const modulePath = "github.com/gocuda/gocuda"

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "", "Prints gocuda's module version ((devel) when built from a checkout), Go's version\n"+
		"and platform, how the CUDA driver is called and its CUDA version, and the CUDA\n"+
		"libraries found, one line each (gocuda doctor says where it looked for the rest).", stdout)
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("version takes no arguments, got %q", fs.Args())
	}
	info, _ := debug.ReadBuildInfo() // nil without build information: "unknown"
	return writeVersion(stdout, info)
}

// writeVersion writes version's lines. The libraries are found as doctor
// finds them; a missing one is only named, doctor has the why.
func writeVersion(w io.Writer, info *debug.BuildInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "gocuda\t%s\n", moduleVersion(info))
	fmt.Fprintf(tw, "Go\t%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(tw, "cgo\t%s, call path %s\n", yes(cgoEnabled), cuda.CallPath())
	fmt.Fprintf(tw, "CUDA driver\t%s\n", driverSummary())
	missing := false
	for _, l := range libraries {
		file, err := l.library()
		switch _, searched := parseSearch(err); {
		case err == nil:
			fmt.Fprintf(tw, "%s\t%s\n", l.name, l.found(file))
		case searched:
			fmt.Fprintf(tw, "%s\tnot found\n", l.name)
		default:
			// Found but refused (too old, a symbol missing), or not
			// looked for (no cgo, a knob that does not parse).
			fmt.Fprintf(tw, "%s\tnot loaded\n", l.name)
		}
		missing = missing || err != nil
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if missing {
		_, err := fmt.Fprintln(w, "(gocuda doctor says where the missing libraries were looked for, and why they did not load)")
		return err
	}
	return nil
}

// moduleVersion is gocuda's version in the build information: a release
// (v0.4.0) when built from the module proxy, "(devel)" from a checkout,
// with the commit when the build recorded one.
func moduleVersion(info *debug.BuildInfo) string {
	if info == nil {
		return "unknown (the binary has no build information)"
	}
	v := ""
	if info.Main.Path == modulePath {
		v = info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == modulePath {
			v = d.Version
		}
	}
	if v == "" {
		v = "(devel)" // a test binary's main module has no version
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += ", commit " + rev[:min(12, len(rev))]
		if modified == "true" {
			v += " with local changes"
		}
	}
	return v
}

// driverSummary is doctor's CUDA driver section in a few words.
func driverSummary() string {
	switch state, v, _ := driver(); state {
	case driverUnreachable:
		return "unreachable: built without cgo"
	case driverNone:
		return "none found"
	case driverNoGPU:
		return "loaded, but it sees no GPU"
	case driverFailed:
		return "failed to initialize (gocuda doctor says why)"
	default:
		return cudaVersion(v)
	}
}
