// Package doccheck keeps README.md and docs/*.md true. Its tests run every
// program output the pages show and compare it with the page, check that
// every gocuda identifier, command, flag and repository path the pages name
// exists, and type docs/getting-started.md's install steps into a fresh
// module as a user would.
//
// A fenced block is tied to what produced it by an HTML comment on the line
// before it (blank lines between are allowed); the comment does not show
// when the page is rendered:
//
//	<!-- output: go run ./examples/basic -->
//	<!-- output: GOCUDA_HARD_MEMORY_LIMIT=64MiB go run ./limits -->
//	<!-- output: gocuda doctor -->
//	    the block is what the command prints, stdout and stderr together as
//	    a terminal shows them. go run ./NAME runs the page's program NAME
//	    (below), else that package of this repository; gocuda is
//	    ./cmd/gocuda; go tool pprof is run as it is. VAR=value words set the
//	    environment (CGO_ENABLED=0 applies to the build); no GOCUDA_ variable
//	    of the test's own environment is passed on.
//	<!-- output -->
//	    a transcript: each line that starts with "$ " is such a command, and
//	    the lines after it, up to the next "$ " line, what it prints.
//	<!-- output: Example ExampleDeviceMemories (.) -->
//	    the block is that Example's "// Output:" comment, in the package
//	    of that folder; go test checks the comment against the program.
//	<!-- output: not checked: GPU only, from the H100 on 2026-11-24 -->
//	    the block is output that no test here can produce; say why.
//	<!-- program: leaks -->
//	<!-- program: first (examples/basic/main.go) -->
//	    a ```go block holding a whole program, saved as leaks/main.go in a
//	    scratch module that requires this repository (as getting-started's
//	    install steps make one), where go run ./leaks runs it; with a path,
//	    it must also be that file of the repository, as it is.
//	<!-- source: examples/basic/main.go -->
//	    a ```go block that must be that file of the repository, as it is.
//	<!-- install -->
//	    a ```sh block of getting-started's install steps (below).
//
// In a block of output, "…" stands for any text (times, addresses, paths,
// sizes that depend on the machine), and spaces next to it for one or more
// spaces, so that a column of such figures stays aligned on the page. A
// line that is only "…" stands for any number of lines (none included).
// Trailing spaces and trailing blank lines do not count. A nonzero exit
// status is not a failure: the output says what went wrong. Commands run in
// order, a page at a time, in a folder of their own that links the repository's top-level
// entries except docs (docs/img is an empty folder there), so a program may
// read testdata/... and write files that the next command reads.
//
// Every fenced block is either code (an info string such as go or sh) or
// marked: a block without an info string, or with text, console, json or
// output, must carry an output marker, and the tests list those that do not,
// as they list indented code blocks (fence them) and markers that are not
// followed by a fenced block.
//
// The outputs shown are the host backend's on linux/amd64 without a GPU, so
// the tests that run programs skip elsewhere, where a GPU is found, where
// there is no go command (the GPU machines) and under -short.
//
// Named things: an inline code span or a line of a code block that names
// pkg.Name or pkg.Type.Member, for pkg one of this module's public packages,
// must name something declared in that package (its files are parsed, test
// files included; a member is a method, a field or an interface method); a
// span struck out (~~`memprof.Handler`~~) names what is gone and is not
// checked. A span or a code block's line "gocuda COMMAND --flag" must name
// one of cmd/gocuda's commands and flags.
// A path that starts with one of the repository's top-level entries
// (examples/basic, ./cmd/gocuda, scripts/gpu-build.sh, docs/gc.md), in a
// span, a code block or the prose, must exist.
//
// The install steps: the test makes an empty folder and runs each line of
// the page's install blocks there, in order, one at a time ("cd DIR" moves
// it), with "git clone https://github.com/gocuda/gocuda DIR" made a link to
// this checkout. Before each block it saves the page's programs shown above
// it. A "go run ./NAME" line's output must match the block marked
// "output: go run ./NAME". It needs the module proxy unless the module cache
// already holds what gocuda requires, and skips, saying so, when the proxy
// cannot be reached.
package doccheck
