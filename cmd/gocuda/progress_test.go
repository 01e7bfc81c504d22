package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProgressWaitsASecondThenRewritesOneLine(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressTo(&buf)
	now := p.start
	p.now = func() time.Time { return now }

	p.set("step %d", 1)
	assert.Empty(t, buf.String(), "nothing in the first second")

	now = now.Add(1500 * time.Millisecond)
	p.set("step %d", 2)
	assert.Equal(t, "\r\033[Kstep 2 (2s)", buf.String())

	now = now.Add(10 * time.Millisecond)
	p.set("step %d", 3)
	assert.Equal(t, "\r\033[Kstep 2 (2s)", buf.String(), "at most one line per 100 ms")

	now = now.Add(time.Second)
	p.set("step %d", 4)
	p.done()
	assert.Equal(t, "\r\033[Kstep 2 (2s)\r\033[Kstep 4 (3s)\r\033[K", buf.String(), "done erases the line")
}

func TestProgressIsQuietOffATerminalOrWithQuiet(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	defer f.Close()
	for _, p := range []*progress{newProgress(&bytes.Buffer{}, false), newProgress(f, false), newProgress(os.Stderr, true)} {
		assert.Nil(t, p.w)
		p.set("x") // no output, no panic
		p.done()
	}
	assert.False(t, isTerminal(f), "a regular file is not a terminal")
	var nilProgress *progress
	nilProgress.set("x")
	nilProgress.done()
}
