package trace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/internal/trace"
)

// synthetic is a small two-stream trace whose figures are worked out by
// hand in the tests below (sizes rounded to 256 in brackets):
//
//	event  line  op        live   note
//	0      3     a1 1000   1000   [1024] stream 0
//	1      4     a2 3000   4000   [3072] stream 5
//	2      5     f1        3000
//	3      6     a3 1000   4000   [1024] stream 0, same size as a1
//	4      7     a4  500   4500   [512]  stream 5: the peak
//	5      8     f2        1500
//	6      9     f3         500
//	7      10    a5 3000   3500   [3072] stream 5, same size as a2
//	8      11    f5         500   a4 is still live at the end
const synthetic = `# workload synthetic; hand-written; no device
# torch_peak_allocated 4608 torch_peak_reserved 6144 allocs 5 frees 4 streams 2
a 1 1000 0
a 2 3000 5
f 1
a 3 1000 0
a 4 500 5
f 2
f 3
a 5 3000 5
f 5
`

func gz(t testing.TB, text string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write([]byte(text))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func parse(t testing.TB, text string) *trace.Trace {
	t.Helper()
	tr, err := trace.Parse(strings.NewReader(text))
	require.NoError(t, err)
	return tr
}

func TestParseReadsEventsHeaderAndStreams(t *testing.T) {
	tr := parse(t, synthetic)
	assert.Equal(t, 9, len(tr.Events))
	assert.Equal(t, 5, tr.Allocs)
	assert.Equal(t, 4, tr.Frees)
	assert.Equal(t, uint64(4608), tr.TorchPeakAllocated)
	assert.Equal(t, uint64(6144), tr.TorchPeakReserved)
	assert.Equal(t, "synthetic", tr.Meta["workload"])
	assert.Equal(t, "2", tr.Meta["streams"])
	assert.Len(t, tr.Header, 2)
	assert.Equal(t, []uint64{0, 5}, tr.StreamNumbers)
	assert.Equal(t, 2, tr.Streams())
	// a1, a2 live; f1 frees slot 0, which a3 reuses; a4 takes a third.
	assert.Equal(t, 3, tr.Slots)

	want := []trace.Event{
		{Op: trace.Alloc, Size: 1000, Slot: 0, Stream: 0},
		{Op: trace.Alloc, Size: 3000, Slot: 1, Stream: 1},
		{Op: trace.Free, Slot: 0, Stream: 0},
		{Op: trace.Alloc, Size: 1000, Slot: 0, Stream: 0},
		{Op: trace.Alloc, Size: 500, Slot: 2, Stream: 1},
		{Op: trace.Free, Slot: 1, Stream: 1},
		{Op: trace.Free, Slot: 0, Stream: 0},
		// The most recently freed slot (a3's) is reused first.
		{Op: trace.Alloc, Size: 3000, Slot: 0, Stream: 1},
		{Op: trace.Free, Slot: 0, Stream: 1},
	}
	assert.Equal(t, want, tr.Events)
	assert.Equal(t, 3, tr.Line(0))
	assert.Equal(t, 11, tr.Line(8))
	assert.Equal(t, 0, tr.Line(9), "out of range")
}

func TestParseAcceptsGzipAndPlainAlike(t *testing.T) {
	plain := parse(t, synthetic)
	zipped, err := trace.Parse(bytes.NewReader(gz(t, synthetic)))
	require.NoError(t, err)
	assert.Equal(t, plain.Events, zipped.Events)
	assert.Equal(t, plain.TorchPeakReserved, zipped.TorchPeakReserved)
}

func TestParseAcceptsLooseFormatting(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		events int
	}{
		{"empty input", "", 0},
		{"comments only", "# a\n# b\n", 0},
		{"crlf line ends", "a 1 8 0\r\nf 1\r\n", 2},
		{"tabs and runs of spaces", "a\t1   8\t0\n  f  1  \n", 2},
		{"blank lines", "\n\na 1 8 0\n   \n\nf 1\n", 2},
		{"comments between events are ignored", "a 1 8 0\n# torch_peak_reserved notanumber\nf 1\n", 2},
		{"allocation never freed", "a 1 8 0\n", 1},
		{"huge sizes", "a 1 18446744073709551615 0\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := parse(t, tt.text)
			assert.Len(t, tr.Events, tt.events)
		})
	}
}

func TestParseRejectsMalformedLinesNamingTheLine(t *testing.T) {
	tests := []struct {
		name string
		text string
		line int
		msg  string
	}{
		{"unknown event", "a 1 8 0\nx 1 2 3\n", 2, `unknown event "x"`},
		{"alloc missing stream", "a 1 8\n", 1, "allocation wants 3 fields"},
		{"alloc extra field", "a 1 8 0 9\n", 1, "allocation wants 3 fields"},
		{"free without id", "f\n", 1, "free wants 1 field"},
		{"free extra field", "a 1 8 0\nf 1 0\n", 2, "free wants 1 field"},
		{"negative id", "a -1 8 0\n", 1, `bad id "-1"`},
		{"size not a number", "a 1 8k 0\n", 1, `bad size "8k"`},
		{"fractional size", "a 1 8.5 0\n", 1, `bad size "8.5"`},
		{"zero size", "a 1 0 0\n", 1, "0 bytes"},
		{"stream not a number", "a 1 8 s0\n", 1, `bad stream "s0"`},
		{"size overflows", "a 1 18446744073709551616 0\n", 1, "too large"},
		{"id overflows", "f 99999999999999999999\n", 1, "too large"},
		{"free of unknown id", "a 1 8 0\nf 2\n", 2, "free of unknown id 2"},
		{"double free", "a 1 8 0\nf 1\nf 1\n", 3, "already freed (allocated on line 1)"},
		{"duplicate live id", "a 1 8 0\na 1 16 0\n", 2, "duplicate id 1: already allocated on line 1"},
		{"id reused after free", "a 1 8 0\nf 1\na 1 16 0\n", 3, "duplicate id 1"},
		{"bad torch figure in header", "# workload w\n# torch_peak_allocated 1 torch_peak_reserved 7GiB\n", 2, `bad torch_peak_reserved "7GiB"`},
		{"line numbers count comments and blanks", "# c\n\na 1 8 0\n\nf 3\n", 5, "unknown id 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trace.Parse(strings.NewReader(tt.text))
			require.Error(t, err)
			var pe *trace.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.line, pe.Line)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Contains(t, err.Error(), "line ")
		})
	}
}

func TestParseRejectsBrokenGzip(t *testing.T) {
	whole := gz(t, synthetic)
	tests := []struct {
		name string
		data []byte
	}{
		{"bad header", []byte{0x1f, 0x8b, 'x', 'y'}},
		{"method other than deflate, cut short", []byte{0x1f, 0x8b, 7}},
		{"corrupt deflate data", corrupt(whole)},
		{"trailing garbage", append(slices.Clone(whole), "not a gzip member"...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trace.Parse(bytes.NewReader(tt.data))
			var pe *trace.ParseError
			require.ErrorAs(t, err, &pe)
		})
	}
}

// corrupt is a gzip stream with its deflate data garbled: a damaged file,
// which is an error, unlike a file cut short.
func corrupt(whole []byte) []byte {
	c := slices.Clone(whole)
	for i := 12; i < len(c)-8; i++ {
		c[i] ^= 0xff
	}
	return c
}

func TestParseRejectsOverlongLine(t *testing.T) {
	text := "a 1 8 0\n# " + strings.Repeat("x", 2<<20) + "\n"
	_, err := trace.Parse(strings.NewReader(text))
	var pe *trace.ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 2, pe.Line)
	assert.Contains(t, err.Error(), "longer than")
}

func TestParseNumbersStreamsInTheirOrder(t *testing.T) {
	// Stream 7 appears first, but index 0 is the lowest stream number.
	tr := parse(t, "a 1 8 7\na 2 8 2\na 3 8 7\n")
	assert.Equal(t, []uint64{2, 7}, tr.StreamNumbers)
	got := []uint16{tr.Events[0].Stream, tr.Events[1].Stream, tr.Events[2].Stream}
	assert.Equal(t, []uint16{1, 0, 1}, got)
}

func TestParseFileNamesThePathInErrors(t *testing.T) {
	_, err := trace.ParseFile(filepath.Join("testdata", "does-not-exist.trace.gz"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does-not-exist.trace.gz")

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	require.NoError(t, writeFile(bad, []byte("a 1 8 0\nf 2\n")))
	_, err = trace.ParseFile(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad+" line 2: free of unknown id 2")
}

func TestNameOfStripsTraceSuffixes(t *testing.T) {
	assert.Equal(t, "gpt2_train", trace.NameOf("testdata/traces/gpt2_train.trace.gz"))
	assert.Equal(t, "x", trace.NameOf("x.trace"))
	assert.Equal(t, "y", trace.NameOf("/a/b/y.txt"))
}

func TestPeakLiveMatchesHandComputedValues(t *testing.T) {
	tests := []struct {
		name string
		text string
		peak uint64
		at   int
	}{
		{"synthetic", synthetic, 4500, 4},
		{"empty", "", 0, -1},
		{"single", "a 1 100 0\n", 100, 0},
		{"free then bigger alloc", "a 1 100 0\nf 1\na 2 60 0\na 3 60 0\n", 120, 3},
		{"peak reached first wins", "a 1 100 0\nf 1\na 2 100 0\n", 100, 0},
		{"streams share one peak", "a 1 100 0\na 2 50 1\nf 1\na 3 20 1\n", 150, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peak, at := trace.PeakLive(parse(t, tt.text))
			assert.Equal(t, tt.peak, peak)
			assert.Equal(t, tt.at, at)
		})
	}
}

func TestPeakLiveToleratesHandBuiltTraceWithoutSlots(t *testing.T) {
	tr := &trace.Trace{Events: []trace.Event{
		{Op: trace.Alloc, Size: 10, Slot: 3},
		{Op: trace.Alloc, Size: 5, Slot: 0},
		{Op: trace.Free, Slot: 3},
	}}
	peak, at := trace.PeakLive(tr)
	assert.Equal(t, uint64(15), peak)
	assert.Equal(t, 1, at)
}

// The real traces' figures are the ones their README states.
func TestRealTracesMatchTheirReadme(t *testing.T) {
	tests := []struct {
		file                string
		events, allocs      int
		peakLiveGiB         float64
		torchReservedOnLive float64
	}{
		{"gpt2_train.trace.gz", 35283, 17643, 7.17, 1.049},
		{"resnet50_train.trace.gz", 14682, 7341, 5.37, 1.218},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := trace.ParseFile(filepath.Join(tracesDir, tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.events, len(tr.Events))
			assert.Equal(t, tt.allocs, tr.Allocs)
			assert.Equal(t, 1, tr.Streams())
			assert.NotZero(t, tr.TorchPeakAllocated)
			peak, _ := trace.PeakLive(tr)
			assert.InDelta(t, tt.peakLiveGiB, float64(peak)/(1<<30), 0.005)
			assert.InDelta(t, tt.torchReservedOnLive, tr.TorchReservedPerLive(), 0.0005)
		})
	}
}

func TestOpString(t *testing.T) {
	assert.Equal(t, "alloc", trace.Alloc.String())
	assert.Equal(t, "free", trace.Free.String())
	assert.Equal(t, "Op(9)", trace.Op(9).String())
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(synthetic))
	f.Add(gz(f, synthetic))
	f.Add([]byte("a 1 8 0\nf 1\n"))
	f.Add([]byte("a 1 8 0\na 1 8 0\n"))
	f.Add([]byte("f 1\n"))
	f.Add([]byte("a 18446744073709551615 18446744073709551615 18446744073709551615\n"))
	f.Add([]byte("# torch_peak_allocated 1 torch_peak_reserved x\n"))
	f.Add([]byte("a 1 8 3\na 2 8 1\nf 1\na 3 9 2\n"))
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte("\r\n\t \x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Parse(bytes.NewReader(data))
		if err != nil {
			var pe *trace.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %v", err)
			}
			return
		}
		// A trace that parsed must be safe to replay: every index in range,
		// every free matching a live allocation in its slot.
		if tr.Allocs+tr.Frees != len(tr.Events) {
			t.Fatalf("%d allocs + %d frees != %d events", tr.Allocs, tr.Frees, len(tr.Events))
		}
		if c := tr.Cut; c != nil && (c.Events != len(tr.Events) || c.Offset < 0 || c.Offset > int64(len(data))*1032) {
			// 1032: deflate's greatest expansion; plain text's offset is
			// within the input.
			t.Fatalf("cut %+v for %d events of %d input bytes", *c, len(tr.Events), len(data))
		}
		live := make([]bool, tr.Slots)
		for i, e := range tr.Events {
			if int(e.Slot) >= tr.Slots || int(e.Stream) >= tr.Streams() {
				t.Fatalf("event %d out of range: %+v (slots %d, streams %d)", i, e, tr.Slots, tr.Streams())
			}
			switch e.Op {
			case trace.Alloc:
				if live[e.Slot] || e.Size == 0 {
					t.Fatalf("event %d: alloc into live slot or of 0 bytes: %+v", i, e)
				}
				live[e.Slot] = true
			case trace.Free:
				if !live[e.Slot] {
					t.Fatalf("event %d: free of a dead slot: %+v", i, e)
				}
				live[e.Slot] = false
			default:
				t.Fatalf("event %d: bad op %v", i, e.Op)
			}
		}
		trace.PeakLive(tr)
		trace.StreamStats(tr)
	})
}

func TestStreamStatsSplitsTheTraceByStream(t *testing.T) {
	got := trace.StreamStats(parse(t, synthetic))
	want := []trace.StreamStat{
		// Stream 0: a1, a3 (1000 each, never both live), f1, f3.
		{Number: 0, Allocs: 2, Frees: 2, Bytes: 2000, PeakLive: 1000},
		// Stream 5: a2 3000, a4 500 (3500 together), a5 3000, f2, f5.
		{Number: 5, Allocs: 3, Frees: 2, Bytes: 6500, PeakLive: 3500},
	}
	assert.Equal(t, want, got)
}
