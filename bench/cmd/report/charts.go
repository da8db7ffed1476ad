package main

import (
	"fmt"
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chartDPI is the PNGs' resolution: sharp on a high-density screen.
const chartDPI = 144

// colors of the caches, the same in every chart; others take grey.
var colors = map[string]color.Color{
	"tiercache":        color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"tiercache-dram":   color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"tiercache-policy": color.RGBA{R: 0x9e, G: 0xc7, B: 0xe8, A: 0xff},
	"shared":           color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"independent":      color.RGBA{R: 0x9e, G: 0xc7, B: 0xe8, A: 0xff},
	"redis":            color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"redis-all":        color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"redis-lru":        color.RGBA{R: 0xf2, G: 0x9c, B: 0x9c, A: 0xff},
	"memcached":        color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"memcached-ext":    color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"otter":            color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"ristretto":        color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

func colorOf(name string) color.Color {
	if c, ok := colors[name]; ok {
		return c
	}
	return color.Gray{Y: 0x80}
}

// save draws p into a PNG of w × h at path.
func save(path string, w, h vg.Length, drawTo func(draw.Canvas)) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(chartDPI), vgimg.UseBackgroundColor(color.White))
	drawTo(draw.New(img))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// ratioChart: one row per label, a dot at the median ratio and a bar over
// its range, a vertical line at 1 (equal to the peer), on a log scale (so
// that 2× and 0.5× lie as far from 1).
func ratioChart(path, title, xlabel string, labels []string, ss []summary) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	lo, hi := 1.0, 1.0
	var pts plotter.XYs
	var errs plotter.XErrors
	for i, s := range ss {
		if !s.ok() || s.med <= 0 {
			continue // a log axis has no room for a ratio of 0
		}
		y := float64(len(ss) - 1 - i) // the first label on top
		low := s.lo
		if low <= 0 { // a round that measured nothing (a CPU clock tick): the bar stops at a tenth
			low = s.med / 10
		}
		pts = append(pts, plotter.XY{X: s.med, Y: y})
		errs = append(errs, struct{ Low, High float64 }{s.med - low, s.hi - s.med})
		lo, hi = math.Min(lo, low), math.Max(hi, s.hi)
	}
	rev := make([]string, len(labels))
	for i, l := range labels {
		rev[len(labels)-1-i] = l
	}
	p.NominalY(rev...)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ratioTicks{}
	p.X.Min, p.X.Max = lo/1.25, hi*1.25
	one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(len(labels)) - 0.5}})
	if err != nil {
		return err
	}
	one.Color = color.Gray{Y: 0x60}
	one.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(plotter.NewGrid(), one)
	if len(pts) > 0 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = colorOf("tiercache")
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		sc.GlyphStyle.Radius = vg.Points(3.5)
		eb, err := plotter.NewXErrorBars(xyErrs{pts, errs})
		if err != nil {
			return err
		}
		eb.Color = colorOf("tiercache")
		p.Add(eb, sc)
	}
	h := vg.Length(len(labels))*vg.Points(22) + vg.Inch*1.2
	return save(path, 8*vg.Inch, h, p.Draw)
}

// xyErrs are points with their errors along x, for plotter.XErrorBars.
type xyErrs struct {
	plotter.XYs
	plotter.XErrors
}

func (e xyErrs) Len() int { return len(e.XYs) }

// ratioTicks marks a log ratio axis at 1-2-5 steps (finer over less than
// a decade), labelled as ratios.
type ratioTicks struct{}

func (ratioTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	if !(min > 0) || !(max >= min) || math.IsInf(max, 0) {
		return nil // no decades to step through
	}
	steps := []float64{1, 2, 5}
	if max/min < 10 {
		steps = []float64{1, 1.5, 2, 3, 5, 7}
	}
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, m := range steps {
			v := m * math.Pow(10, e)
			if v < min || v > max {
				continue
			}
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%g×", v)})
		}
	}
	return ts
}

// barSeries is one cache's bars in a grouped bar chart: a median and its
// range per group.
type barSeries struct {
	name string
	vals []summary
}

// barChart: groups along x, one bar per series in each, the median as its
// height and a line over the range; marks (may be nil) adds a labelled
// horizontal tick over one series' bars (a bound).
func barChart(path, title, ylabel string, groups []string, series []barSeries, marks *barMarks) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	w := vg.Points(min(40, 360/float64(max(1, len(groups)*len(series)))))
	ymax := 0.0
	for i, s := range series {
		vals := make(plotter.Values, len(groups))
		for g, v := range s.vals {
			vals[g] = v.med
			ymax = math.Max(ymax, v.hi)
		}
		bc, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bc.Color = colorOf(s.name)
		bc.LineStyle.Width = 0
		bc.Offset = w * vg.Length(float64(i)-float64(len(series)-1)/2)
		rb := &offsetRanges{offset: bc.Offset, cap: w / 3, vals: s.vals}
		p.Add(bc, rb)
		p.Legend.Add(s.name, bc)
		if marks != nil && marks.series == s.name {
			m := &offsetRanges{offset: bc.Offset, cap: w / 2, vals: marks.vals, color: color.Black, width: vg.Points(2), ticks: true}
			p.Add(m)
			p.Legend.Add(marks.label, m)
			for _, v := range marks.vals {
				ymax = math.Max(ymax, v.hi)
			}
		}
	}
	p.NominalX(groups...)
	p.Y.Min, p.Y.Max = 0, ymax*1.1
	return save(path, 8*vg.Inch, 4.5*vg.Inch, p.Draw)
}

// namedBars: one bar per name, in its color, the median as its height and a
// line over the range.
func namedBars(path, title, ylabel string, names []string, vals []summary) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	ymax := 0.0
	w := vg.Points(60)
	for i, v := range vals {
		bc, err := plotter.NewBarChart(plotter.Values{v.med}, w)
		if err != nil {
			return err
		}
		bc.XMin = float64(i)
		bc.Color = colorOf(names[i])
		bc.LineStyle.Width = 0
		p.Add(bc)
		ymax = math.Max(ymax, v.hi)
	}
	p.Add(&offsetRanges{cap: w / 3, vals: vals})
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min, p.Y.Max = 0, ymax*1.1
	return save(path, 6*vg.Inch, 4*vg.Inch, p.Draw)
}

// barMarks is a tick per group over the bars of series (e.g. a bound).
type barMarks struct {
	series, label string
	vals          []summary
}

// offsetRanges draws a vertical line from lo to hi with caps at each group
// (x = its index), shifted by offset as the bars it belongs to are: a bar's
// range, or with lo = hi a tick.
type offsetRanges struct {
	offset, cap, width vg.Length
	vals               []summary
	color              color.Color
	ticks              bool // draw single values too, as ticks
}

func (o *offsetRanges) style() draw.LineStyle {
	ls := plotter.DefaultLineStyle
	ls.Color = color.Gray{Y: 0x30}
	if o.color != nil {
		ls.Color = o.color
	}
	if o.width > 0 {
		ls.Width = o.width
	}
	return ls
}

func (o *offsetRanges) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := o.style()
	for i, v := range o.vals {
		if !v.ok() || (v.n == 1 && !o.ticks) {
			continue
		}
		x := trX(float64(i)) + o.offset
		ylo, yhi := trY(v.lo), trY(v.hi)
		if v.hi > v.lo {
			c.StrokeLine2(ls, x, ylo, x, yhi)
			c.StrokeLine2(ls, x-o.cap/2, ylo, x+o.cap/2, ylo)
		}
		c.StrokeLine2(ls, x-o.cap/2, yhi, x+o.cap/2, yhi)
	}
}

func (o *offsetRanges) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for _, v := range o.vals {
		if v.ok() {
			ymin, ymax = math.Min(ymin, v.lo), math.Max(ymax, v.hi)
		}
	}
	if math.IsInf(ymin, 1) {
		ymin, ymax = 0, 0
	}
	return 0, float64(max(0, len(o.vals)-1)), ymin, ymax
}

// Thumbnail draws the legend's entry: a short horizontal tick.
func (o *offsetRanges) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(o.style(), c.Min.X, y, c.Max.X, y)
}

// linePanel is one plot of a lineChart: a line per series.
type linePanel struct {
	title  string
	series []lineSeries
}

type lineSeries struct {
	name   string
	xs, ys []float64
}

// lineChart draws the panels side by side, sharing their axis labels.
func lineChart(path, xlabel, ylabel string, panels []linePanel) error {
	plots := [][]*plot.Plot{make([]*plot.Plot, len(panels))}
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = xlabel
		p.Y.Label.Text = ylabel
		p.Legend.Top = false
		p.Legend.Left = false
		p.Legend.XOffs, p.Legend.YOffs = -vg.Points(4), vg.Points(4)
		p.Add(plotter.NewGrid())
		var ticks plot.ConstantTicks
		for _, s := range pn.series {
			if len(ticks) == 0 {
				for _, x := range s.xs {
					ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprintf("%g", x)})
				}
			}
			xys := make(plotter.XYs, len(s.xs))
			for j := range s.xs {
				xys[j] = plotter.XY{X: s.xs[j], Y: s.ys[j]}
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			l.Color, pts.Color = colorOf(s.name), colorOf(s.name)
			l.Width = vg.Points(1.5)
			p.Add(l, pts)
			p.Legend.Add(s.name, l, pts)
		}
		p.X.Tick.Marker = ticks
		plots[0][i] = p
	}
	w := vg.Length(len(panels)) * 4.2 * vg.Inch
	return save(path, w, 4*vg.Inch, func(dc draw.Canvas) {
		cs := plot.Align(plots, draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Points(12),
			PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}, dc)
		for i, p := range plots[0] {
			p.Draw(cs[0][i])
		}
	})
}
