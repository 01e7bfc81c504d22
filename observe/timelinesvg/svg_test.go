package timelinesvg

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/pool"
)

// svgDoc is what the tests read back from a picture: its texts and the
// style and vertex count of each path.
type svgDoc struct {
	texts []string
	paths []svgPath
}

type svgPath struct {
	style    string
	vertices int
}

var vertex = regexp.MustCompile(`[ML]`)

// parseSVG decodes the whole document as XML, failing on anything that
// is not well formed.
func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(b))
	sawSVG := false
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the SVG is well-formed XML")
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "svg":
				sawSVG = true
			case "text":
				inText = true
			case "path":
				var p svgPath
				for _, a := range el.Attr {
					switch a.Name.Local {
					case "style":
						p.style = a.Value
					case "d":
						p.vertices = len(vertex.FindAllString(a.Value, -1))
					}
				}
				doc.paths = append(doc.paths, p)
			}
		case xml.EndElement:
			if el.Name.Local == "text" {
				inText = false
			}
		case xml.CharData:
			if inText {
				doc.texts = append(doc.texts, strings.TrimSpace(string(el)))
			}
		}
	}
	require.True(t, sawSVG, "an <svg> root")
	return doc
}

// linesOf returns the vertex counts of the paths stroked in color (an
// upper-case hex triple as the SVG writes it).
func (d svgDoc) linesOf(color string) []int {
	var n []int
	for _, p := range d.paths {
		if strings.Contains(p.style, "stroke:"+color) {
			n = append(n, p.vertices)
		}
	}
	return n
}

func TestWriteDrawsLiveAndReservedWithMarksAndByteTicks(t *testing.T) {
	c := observe.Chart{
		Title: "device 0", XLabel: "time (s)",
		X:        []float64{0, 1, 2, 3, 4},
		Live:     []uint64{0, 3 << 30, 1 << 30, 2 << 30, 0},
		Reserved: []uint64{0, 4 << 30, 4 << 30, 3 << 30, 1 << 30},
		Marks:    []observe.ChartMark{{X: 1.5, Kind: pool.EventCollect}, {X: 2.5, Kind: pool.EventOOMRetry}, {X: 3.5, Kind: pool.EventCollect}},
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "training", c))
	doc := parseSVG(t, buf.Bytes())

	assert.Contains(t, doc.texts, "training: device 0")
	assert.Contains(t, doc.texts, "time (s)")
	assert.Contains(t, doc.texts, "bytes")
	for _, legend := range []string{"live", "reserved", "collection (2)", "OOM retry"} {
		assert.Contains(t, doc.texts, legend)
	}
	assert.NotContains(t, doc.texts, "out of memory", "no OOM mark, no legend entry for one")
	assert.Contains(t, doc.texts, "4 GiB", "byte ticks in the unit of the largest value")

	// Steps: n points draw 2n-1 vertices. Each series also draws a
	// two-vertex legend sample.
	assert.ElementsMatch(t, []int{9, 2}, doc.linesOf("#1F77B4"), "live line and its legend sample")
	assert.ElementsMatch(t, []int{9, 2}, doc.linesOf("#FF7F0E"), "reserved line and its legend sample")
	assert.Len(t, doc.linesOf("#6D6D6D"), 3, "two collections and the legend's sample")
}

func TestWriteStacksAPanelPerChart(t *testing.T) {
	one := observe.Chart{Title: "gpt2: split", XLabel: "event", X: []float64{0, 1}, Live: []uint64{1, 2}, Reserved: []uint64{2, 2}}
	two := one
	two.Title = "gpt2: binned"
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "", one, two))
	doc := parseSVG(t, buf.Bytes())
	assert.Contains(t, doc.texts, "gpt2: split")
	assert.Contains(t, doc.texts, "gpt2: binned")
	assert.Len(t, doc.linesOf("#1F77B4"), 4)
	assert.Contains(t, buf.String(), `height="432pt"`, "two panels of three inches")
}

func TestWriteGivesEveryPanelOneByteScale(t *testing.T) {
	small := observe.Chart{Title: "small", X: []float64{0, 1}, Live: []uint64{1 << 30, 1 << 30}, Reserved: []uint64{2 << 30, 2 << 30}}
	big := observe.Chart{Title: "big", X: []float64{0, 1}, Live: []uint64{1 << 30, 8 << 30}, Reserved: []uint64{8 << 30, 8 << 30}}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "", small, big))
	top := 0
	for _, s := range parseSVG(t, buf.Bytes()).texts {
		if s == "8 GiB" {
			top++
		}
	}
	assert.Equal(t, 2, top, "the small panel is drawn to the big one's scale, so heights compare")
}

func TestWriteRejectsBadCharts(t *testing.T) {
	err := Write(io.Discard, "x")
	assert.ErrorContains(t, err, "at least one chart")
	err = Write(io.Discard, "x", observe.Chart{Title: "bad", X: []float64{0, 1}, Live: []uint64{1}, Reserved: []uint64{1, 2}})
	assert.ErrorContains(t, err, `chart "bad" has 2 x values, 1 live and 2 reserved`)
}

func TestByteTicksUseTheLargestValuesUnit(t *testing.T) {
	for _, tc := range []struct {
		hi   float64
		want string
	}{
		{1000, " B"},
		{3 << 10, " KiB"},
		{12 << 20, " MiB"},
		{7.5 * (1 << 30), " GiB"},
	} {
		var labels []string
		for _, tk := range (byteTicks{}).Ticks(0, tc.hi) {
			if tk.Label != "" && tk.Value != 0 {
				labels = append(labels, tk.Label)
				assert.True(t, strings.HasSuffix(tk.Label, tc.want), "%q for a maximum of %g", tk.Label, tc.hi)
			}
			if tk.Value == 0 {
				assert.Equal(t, "0", tk.Label, "zero needs no unit")
			}
		}
		assert.NotEmpty(t, labels, "labelled ticks up to %g", tc.hi)
	}
}

func TestWriteTimelineNeedsPoints(t *testing.T) {
	tl, err := observe.NewTimeline(observe.TimelineOptions{})
	require.NoError(t, err)
	assert.ErrorContains(t, WriteTimeline(io.Discard, tl, "empty"), "no points to draw")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tl.Record(observe.Point{Time: t0, Live: 1, Reserved: 2})
	tl.Observe(pool.Event{Kind: pool.EventOOMRetry, Time: t0.Add(5 * time.Millisecond)})
	var buf bytes.Buffer
	require.NoError(t, WriteTimeline(&buf, tl, "run"))
	doc := parseSVG(t, buf.Bytes())
	assert.Contains(t, doc.texts, "run: device 0")
	assert.Contains(t, doc.texts, "OOM retry")
}

func TestWriteDrawsMarksOnOneSpotOnce(t *testing.T) {
	c := observe.Chart{X: []float64{0, 1000}, Live: []uint64{1, 1}, Reserved: []uint64{2, 2}}
	// 300 retries within a thousandth of the range, then one far off.
	for i := range 300 {
		c.Marks = append(c.Marks, observe.ChartMark{X: 500 + float64(i)/1000, Kind: pool.EventOOMRetry})
	}
	c.Marks = append(c.Marks, observe.ChartMark{X: 900, Kind: pool.EventOOMRetry})
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "", c))
	doc := parseSVG(t, buf.Bytes())
	assert.Contains(t, doc.texts, "OOM retry (301)", "the legend counts every mark")
	assert.Len(t, doc.linesOf("#D52627"), 3, "two spots and the legend's sample")
}

func TestThinKeepsMarksFartherApartThanTheGap(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		gap  float64
		want []float64
	}{
		{[]float64{5}, 1, []float64{5}},
		{[]float64{3, 1, 2}, 0, []float64{1, 2, 3}},
		{[]float64{0, 0.5, 1, 1.5, 2, 10}, 1, []float64{0, 1.5, 10}},
		{[]float64{2, 2, 2}, 0, []float64{2}},
	} {
		assert.Equal(t, tc.want, thin(slices.Clone(tc.xs), tc.gap), "%v gap %g", tc.xs, tc.gap)
	}
}
