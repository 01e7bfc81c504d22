package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress shows what a long command is doing on stderr, on one line that
// each update rewrites, so that a run of minutes is not silent. It says
// nothing for the first second (a quick run shows no flicker), nothing with
// --quiet, and nothing when stderr is not a terminal: a log or a pipe gets
// only the results.
type progress struct {
	w       io.Writer // nil: off
	start   time.Time
	delay   time.Duration // nothing is shown before this much has passed
	every   time.Duration // at most one line per this
	mu      sync.Mutex
	last    time.Time
	shown   bool
	now     func() time.Time
	current string
}

// newProgress returns progress for a command whose stderr is w: on only
// when w is a terminal and quiet is false.
func newProgress(w io.Writer, quiet bool) *progress {
	if quiet || !isTerminal(w) {
		w = nil
	}
	return newProgressTo(w)
}

// newProgressTo shows progress on w (nil: none) whatever it is.
func newProgressTo(w io.Writer) *progress {
	return &progress{w: w, start: time.Now(), delay: time.Second, every: 100 * time.Millisecond, now: time.Now}
}

// isTerminal reports whether w is a character device, as a terminal is.
// (/dev/null is one too, where progress costs nothing.)
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// set says what the command is doing now ("split 1.0 MiB, 3 of 25").
func (p *progress) set(format string, a ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = fmt.Sprintf(format, a...)
	now := p.now()
	if now.Sub(p.start) < p.delay || (p.shown && now.Sub(p.last) < p.every) {
		return
	}
	p.last, p.shown = now, true
	// \r and erase-to-end-of-line: the line is rewritten in place.
	fmt.Fprintf(p.w, "\r\033[K%s (%s)", p.current, now.Sub(p.start).Round(time.Second))
}

// done erases the progress line, if one was shown, before results or an
// error are printed.
func (p *progress) done() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
