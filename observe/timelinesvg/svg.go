package timelinesvg

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/pool"
)

// The picture's size: a page's width, and each panel tall enough for its
// byte ticks to be read.
const (
	chartWidth       = 9 * vg.Inch
	chartPanelHeight = 3 * vg.Inch
	chartLegendWidth = 1.8 * vg.Inch
)

var (
	liveColor     = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	reservedColor = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	// markStyles give each marked kind its look and legend text; the
	// order is the legend's.
	markStyles = []struct {
		kind  pool.EventKind
		label string
		style draw.LineStyle
	}{
		{pool.EventCollect, "collection", draw.LineStyle{Color: color.NRGBA{R: 110, G: 110, B: 110, A: 200}, Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}},
		{pool.EventOOMRetry, "OOM retry", draw.LineStyle{Color: color.NRGBA{R: 214, G: 39, B: 40, A: 160}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}},
		{pool.EventOOM, "out of memory", draw.LineStyle{Color: color.NRGBA{R: 214, G: 39, B: 40, A: 160}, Width: vg.Points(1)}},
	}
)

// WriteTimeline draws tl as an SVG picture: per device, live and reserved
// bytes over seconds since its StartTime, with a vertical line at each
// collection, out-of-memory retry and failure. Stop tl first, or the
// picture is of the moment it was called.
func WriteTimeline(w io.Writer, tl *observe.Timeline, title string) error {
	charts := tl.Charts()
	if len(charts) == 0 {
		return errors.New("timelinesvg: the timeline has no points to draw (was it started, with pools that did something?)")
	}
	return Write(w, title, charts...)
}

// Write draws charts as one SVG picture, a panel each, stacked, every
// panel titled title and its chart's Title, its legend to its right.
func Write(w io.Writer, title string, charts ...observe.Chart) error {
	if len(charts) == 0 {
		return errors.New("timelinesvg: Write needs at least one chart")
	}
	plots := make([][]*plot.Plot, len(charts))
	legends := make([]plot.Legend, len(charts))
	for i := range charts {
		p, l, err := chartPlot(&charts[i], title)
		if err != nil {
			return err
		}
		plots[i], legends[i] = []*plot.Plot{p}, l
	}
	// One byte scale for all panels, so that heights compare across
	// them (one pool's reserved bytes against another's).
	top := 1.0
	for _, p := range plots {
		top = math.Max(top, p[0].Y.Max)
	}
	for _, p := range plots {
		p[0].Y.Max = top
	}
	c := vgsvg.New(chartWidth, chartPanelHeight*vg.Length(len(charts)))
	drawPanels(draw.New(c), plots, legends)
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("timelinesvg: writing the SVG: %w", err)
	}
	return nil
}

// drawPanels lays the panels out on full, stacked, each legend to the
// right of its plot.
func drawPanels(full draw.Canvas, plots [][]*plot.Plot, legends []plot.Legend) {
	// The legends get a strip of their own: inside the plot they would
	// hide the lines, which start and end anywhere.
	plotArea := draw.Crop(full, 0, -chartLegendWidth, 0, 0)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(12)}
	canvases := plot.Align(plots, tiles, plotArea)
	for i := range plots {
		pc := canvases[i][0]
		plots[i][0].Draw(pc)
		lc := pc
		lc.Min.X, lc.Max.X = plotArea.Max.X, full.Max.X
		// Level with the top of the data area, below the panel's title.
		lc.Max.Y -= vg.Points(18)
		legends[i].Draw(lc)
	}
}

func chartPlot(c *observe.Chart, title string) (*plot.Plot, plot.Legend, error) {
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	if len(c.Live) != len(c.X) || len(c.Reserved) != len(c.X) {
		return nil, legend, fmt.Errorf("timelinesvg: chart %q has %d x values, %d live and %d reserved: they must be as many", c.Title, len(c.X), len(c.Live), len(c.Reserved))
	}
	p := plot.New()
	p.Title.Text = title
	if c.Title != "" {
		if p.Title.Text != "" {
			p.Title.Text += ": "
		}
		p.Title.Text += c.Title
	}
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = "bytes"
	p.Y.Tick.Marker = byteTicks{}
	p.Add(plotter.NewGrid())

	// Marks first, so that the byte lines are drawn over them: hundreds
	// of out-of-memory retries at a peak would otherwise hide it.
	var markLegend []func()
	lo, hi := math.Inf(1), math.Inf(-1)
	if len(c.X) > 0 {
		lo, hi = c.X[0], c.X[len(c.X)-1]
	}
	for _, m := range c.Marks {
		lo, hi = math.Min(lo, m.X), math.Max(hi, m.X)
	}
	for _, ms := range markStyles {
		v := &vlines{style: ms.style}
		n := 0
		for _, m := range c.Marks {
			if m.Kind == ms.kind {
				v.xs = append(v.xs, m.X)
				n++
			}
		}
		if n == 0 {
			continue
		}
		v.xs = thin(v.xs, (hi-lo)/markBins)
		p.Add(v)
		label := ms.label
		if n > 1 {
			label = fmt.Sprintf("%s (%d)", ms.label, n)
		}
		markLegend = append(markLegend, func() { legend.Add(label, v) })
	}
	// Steps, not slopes: memory holds its value until the next sample.
	for _, s := range []struct {
		name  string
		ys    []uint64
		color color.Color
	}{{"reserved", c.Reserved, reservedColor}, {"live", c.Live, liveColor}} {
		xys := make(plotter.XYs, len(c.X))
		for i := range xys {
			xys[i] = plotter.XY{X: c.X[i], Y: float64(s.ys[i])}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, legend, fmt.Errorf("timelinesvg: chart %q, %s: %w", c.Title, s.name, err)
		}
		l.StepStyle = plotter.PostStep
		l.Color = s.color
		l.Width = vg.Points(1.5)
		p.Add(l)
		legend.Add(s.name, l)
	}
	for _, add := range markLegend {
		add()
	}
	// Bytes start at zero: a line's height is then what it costs.
	p.Y.Min = 0
	return p, legend, nil
}

// vlines draws a vertical line across the plot at each of xs.
type vlines struct {
	xs    []float64
	style draw.LineStyle
}

func (v *vlines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, x := range v.xs {
		px := trX(x)
		c.StrokeLine2(v.style, px, c.Min.Y, px, c.Max.Y)
	}
}

// DataRange widens the x axis to every mark and leaves y alone.
func (v *vlines) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, x := range v.xs {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1)
}

// Thumbnail is the legend's sample: a short vertical line.
func (v *vlines) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
}

// byteTicks labels a byte axis in the binary unit that suits its largest
// value, at round numbers of that unit ("1.5 GiB"), where the default
// ticks would put round decimal numbers of bytes.
type byteTicks struct{}

var byteUnits = []struct {
	size float64
	name string
}{{1 << 50, "PiB"}, {1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}

func (byteTicks) Ticks(lo, hi float64) []plot.Tick {
	size, name := 1.0, "B"
	for _, u := range byteUnits {
		if hi >= u.size {
			size, name = u.size, u.name
			break
		}
	}
	ticks := plot.DefaultTicks{}.Ticks(lo/size, hi/size)
	for i := range ticks {
		v := ticks[i].Value
		ticks[i].Value = v * size
		switch {
		case ticks[i].Label == "":
		case v == 0:
			ticks[i].Label = "0"
		default:
			ticks[i].Label = fmt.Sprintf("%.4g %s", v, name)
		}
	}
	return ticks
}

// markBins is how many distinct x positions a kind of mark is drawn at,
// at most, across the chart's x range: about the data area's width in
// points; more would stack lines on one spot, making the file larger and
// nothing more visible.
const markBins = 500

// thin sorts xs and drops each mark closer than gap to the one kept
// before it: it would be drawn on the same spot.
func thin(xs []float64, gap float64) []float64 {
	slices.Sort(xs)
	out := xs[:1]
	for _, x := range xs[1:] {
		if x-out[len(out)-1] > gap {
			out = append(out, x)
		}
	}
	return out
}
