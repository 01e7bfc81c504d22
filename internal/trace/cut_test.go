package trace_test

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/internal/trace"
)

// flushedGzip compresses text as gocuda's recorder does, a sync flush
// after every line, and returns the stream and the offset at which each
// line's flush ended (the place a program killed then leaves the file).
func flushedGzip(t testing.TB, text string) (data []byte, flushed []int) {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	require.NoError(t, err)
	for line := range strings.SplitAfterSeq(text, "\n") {
		if line == "" {
			continue
		}
		_, err := zw.Write([]byte(line))
		require.NoError(t, err)
		require.NoError(t, zw.Flush())
		flushed = append(flushed, buf.Len())
	}
	require.NoError(t, zw.Close())
	return buf.Bytes(), flushed
}

// event is an event with its stream as the number written in the trace:
// a cut trace may number fewer streams, so dense indices can differ.
type event struct {
	op     trace.Op
	size   uint64
	slot   uint32
	stream uint64
}

func eventsOf(tr *trace.Trace) []event {
	out := make([]event, len(tr.Events))
	for i, e := range tr.Events {
		out[i] = event{e.Op, e.Size, e.Slot, tr.StreamNumbers[e.Stream]}
	}
	return out
}

// checkPrefix fails unless cut parsed as the first events of whole, with
// a Cut that counts them.
func checkPrefix(t testing.TB, whole, cut *trace.Trace) {
	t.Helper()
	got, want := eventsOf(cut), eventsOf(whole)
	if len(got) > len(want) || !assert.ObjectsAreEqual(want[:len(got)], got) {
		t.Fatalf("the cut trace's %d events are not the first of the whole trace's %d", len(got), len(want))
	}
	if cut.Cut != nil && cut.Cut.Events != len(cut.Events) {
		t.Fatalf("Cut.Events %d, but %d events were read", cut.Cut.Events, len(cut.Events))
	}
	if cut.Allocs+cut.Frees != len(cut.Events) {
		t.Fatalf("%d allocs + %d frees != %d events", cut.Allocs, cut.Frees, len(cut.Events))
	}
}

func TestParseReadsPlainTextCutAtEveryByte(t *testing.T) {
	whole := parse(t, synthetic)
	for k := 0; k <= len(synthetic); k++ {
		text := synthetic[:k]
		tr, err := trace.Parse(strings.NewReader(text))
		require.NoError(t, err, "cut at byte %d", k)
		checkPrefix(t, whole, tr)
		complete := strings.LastIndexByte(text, '\n') + 1
		// Every complete line is read, and nothing of the cut one.
		assert.Len(t, tr.Events, len(parse(t, text[:complete]).Events), "cut at byte %d", k)
		if complete == k {
			assert.Nil(t, tr.Cut, "cut at byte %d: between lines, plain text cannot tell", k)
			continue
		}
		require.NotNil(t, tr.Cut, "cut at byte %d", k)
		assert.Equal(t, int64(complete), tr.Cut.Offset)
		// The cut record as it was read, clipped if long.
		assert.True(t, strings.HasPrefix(strings.TrimSpace(text[complete:]), strings.TrimSuffix(tr.Cut.Partial, "...")),
			"cut at byte %d: partial %q", k, tr.Cut.Partial)
		assert.False(t, tr.Cut.Gzip)
	}
}

func TestParseReadsGzipCutAtEveryByte(t *testing.T) {
	whole := parse(t, synthetic)
	data, flushed := flushedGzip(t, synthetic)
	lines := strings.SplitAfter(synthetic, "\n")
	prev := 0
	var last *trace.Trace
	for k := 0; k <= len(data); k++ {
		tr, err := trace.Parse(bytes.NewReader(data[:k]))
		require.NoError(t, err, "cut at byte %d of %d", k, len(data))
		checkPrefix(t, whole, tr)
		require.GreaterOrEqual(t, len(tr.Events), prev, "a longer prefix never reads fewer events")
		prev, last = len(tr.Events), tr
		if k == len(data) || k == 0 {
			// Whole, or empty: no byte says it is gzip.
			assert.Nil(t, tr.Cut, "cut at byte %d", k)
			continue
		}
		require.NotNil(t, tr.Cut, "cut at byte %d: a gzip stream knows its end", k)
		assert.True(t, tr.Cut.Gzip)
		assert.Equal(t, int64(k), tr.Cut.FileBytes)
		for i, f := range flushed {
			if k == f {
				// Cut where a flush ended: every line written before it
				// is read, as a program killed there would leave it.
				n := len(parse(t, strings.Join(lines[:i+1], "")).Events)
				assert.Len(t, tr.Events, n, "cut after line %d's flush", i+1)
				assert.Equal(t, int64(len(strings.Join(lines[:i+1], ""))), tr.Cut.Offset)
				assert.Empty(t, tr.Cut.Partial, "a flush ends on a line end")
			}
		}
	}
	assert.Equal(t, whole.Events, last.Events, "the whole stream")
}

func TestParseKeepsTheLastLineOfAnIntactGzipStream(t *testing.T) {
	// No final newline: plain text may have been cut there, an intact
	// gzip stream (checksum and length checked) was not.
	tr, err := trace.Parse(bytes.NewReader(gz(t, "a 1 8 0\nf 1")))
	require.NoError(t, err)
	assert.Len(t, tr.Events, 2)
	assert.Nil(t, tr.Cut)

	tr = parse(t, "a 1 8 0\nf 1")
	assert.Len(t, tr.Events, 1)
	require.NotNil(t, tr.Cut)
	assert.Equal(t, trace.Cut{Events: 1, Offset: 8, Partial: "f 1"}, *tr.Cut)
}

func TestCutSaysWhereTheTraceEnds(t *testing.T) {
	tests := []struct {
		name string
		cut  trace.Cut
		want string
	}{
		{"plain, mid-record", trace.Cut{Events: 12345, Offset: 678901, Partial: "a 12 40"},
			"the trace ends after 12345 events, cut mid-record at byte 678901"},
		{"gzip, mid-record", trace.Cut{Events: 7, Offset: 90, Partial: "f", Gzip: true, FileBytes: 55},
			"the trace ends after 7 events, cut mid-record at byte 90 of its text (the gzip stream stops without its end after 55 bytes)"},
		{"gzip, between records", trace.Cut{Events: 7, Offset: 92, Gzip: true, FileBytes: 60},
			"the trace ends after 7 events, cut between records at byte 92 of its text (the gzip stream stops without its end after 60 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cut.String())
		})
	}
}

func TestParseCutInTheGzipHeader(t *testing.T) {
	data := gz(t, synthetic)
	for k := 1; k < 10; k++ {
		tr, err := trace.Parse(bytes.NewReader(data[:k]))
		require.NoError(t, err, "cut at byte %d", k)
		assert.Empty(t, tr.Events)
		require.NotNil(t, tr.Cut)
		assert.Equal(t, trace.Cut{Gzip: true, FileBytes: int64(k)}, *tr.Cut)
	}
}

func TestParseNotesTheRecordersEndLine(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		ended bool
	}{
		{"stopped", "# recorder gocuda pool split device 0\na 1 8 0\n# end allocs 1 frees 0\n", true},
		{"stopped with no event", "# recorder gocuda pool split device 0\n# end allocs 0 frees 0\n", true},
		{"left to its flushes", "# recorder gocuda pool split device 0\na 1 8 0\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := parse(t, tt.text)
			assert.Equal(t, tt.ended, tr.Ended)
			assert.Equal(t, "gocuda", tr.Meta["recorder"])
			assert.NotContains(t, tr.Meta, "end", "the end line is not header")
		})
	}
}

// FuzzParseCut checks that any prefix of a trace that parses, plain or
// gzip with the recorder's flushes, parses too, as the trace's first
// events: a trace cut at any byte is read, never refused or misread.
func FuzzParseCut(f *testing.F) {
	f.Add([]byte(synthetic), uint16(100))
	f.Add([]byte(synthetic), uint16(7))
	f.Add([]byte("a 1 8 0\nf 1\n"), uint16(9))
	f.Add([]byte("# c\n\na 1 8 3\na 2 8 1\nf 1\na 3 9 2\n"), uint16(30))
	f.Add([]byte("a 1 18446744073709551615 0\r\nf 1"), uint16(12))
	f.Fuzz(func(t *testing.T, data []byte, at uint16) {
		if len(data) > 4096 {
			t.Skip("kept cheap: each input is compressed and parsed three times")
		}
		whole, err := trace.Parse(bytes.NewReader(data))
		if err != nil || whole.Cut != nil || (len(data) > 0 && data[0] == 0x1f) {
			return // not a whole plain-text trace
		}
		k := int(at) % (len(data) + 1)
		tr, err := trace.Parse(bytes.NewReader(data[:k]))
		if err != nil {
			t.Fatalf("plain text cut at byte %d of %d: %v", k, len(data), err)
		}
		checkPrefix(t, whole, tr)

		z, _ := flushedGzip(t, string(data))
		k = int(at) % (len(z) + 1)
		tr, err = trace.Parse(bytes.NewReader(z[:k]))
		if err != nil {
			t.Fatalf("gzip cut at byte %d of %d: %v", k, len(z), err)
		}
		// Empty input is no gzip stream, so not a cut one.
		if (k > 0 && k < len(z)) != (tr.Cut != nil) {
			t.Fatalf("gzip cut at byte %d of %d: Cut %v", k, len(z), tr.Cut)
		}
		checkPrefix(t, whole, tr)
	})
}
