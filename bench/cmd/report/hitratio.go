package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// hitCaches are BenchmarkHitRatio's caches (bench/caches_test.go), in the
// order the tables show them.
var hitCaches = []string{"ristretto", "otter", "tiercache-policy", "tiercache-dram"}

// hitRow is one workload of BenchmarkHitRatio: each cache's hit% as the
// median of its runs with their range.
type hitRow struct {
	workload string
	hit      map[string]summary
}

// curvePoint is one budget of BenchmarkHitRatioCurve: each cache's hit%.
type curvePoint struct {
	pct float64
	hit map[string]float64
}

// parseHitRatio reads the bench module's hit-ratio benchmark output:
// BenchmarkHitRatio/<workload>/<cache> (hit%, and with several runs
// min-hit% and max-hit%) and BenchmarkHitRatioCurve/<workload>/budget=<pct>pct/<cache>.
func parseHitRatio(out string) (rows []*hitRow, curves map[string][]*curvePoint, order []string) {
	curves = map[string][]*curvePoint{}
	for _, g := range parseGoBench(out) {
		p := g.parts()
		h, ok := g.figures["hit%"]
		if !ok {
			continue
		}
		switch {
		case len(p) == 3 && p[0] == "HitRatio":
			i := slices.IndexFunc(rows, func(r *hitRow) bool { return r.workload == p[1] })
			if i < 0 {
				rows = append(rows, &hitRow{workload: p[1], hit: map[string]summary{}})
				i = len(rows) - 1
			}
			s := summary{n: 1, med: h, lo: h, hi: h}
			if lo, ok := g.figures["min-hit%"]; ok {
				s.n, s.lo, s.hi = 2, lo, g.figures["max-hit%"]
			}
			rows[i].hit[p[2]] = s
		case len(p) == 4 && p[0] == "HitRatioCurve" && strings.HasPrefix(p[2], "budget="):
			pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(p[2], "budget="), "pct"), 64)
			if err != nil {
				continue
			}
			if _, seen := curves[p[1]]; !seen {
				order = append(order, p[1])
			}
			pts := curves[p[1]]
			i := slices.IndexFunc(pts, func(c *curvePoint) bool { return c.pct == pct })
			if i < 0 {
				pts = append(pts, &curvePoint{pct: pct, hit: map[string]float64{}})
				i = len(pts) - 1
			}
			pts[i].hit[p[3]] = h
			curves[p[1]] = pts
		}
	}
	for _, pts := range curves {
		slices.SortFunc(pts, func(a, b *curvePoint) int { return cmp.Compare(a.pct, b.pct) })
	}
	return rows, curves, order
}

// hitRatio: bench/ BenchmarkHitRatio and BenchmarkHitRatioCurve, in-process.
func (rp *report) hitRatio() {
	rows, curves, order := parseHitRatio(rp.run.logs["hitratio"])
	if !rp.section("hitratio", "Hit ratio at equal bytes against otter and ristretto", len(rows) > 0) {
		return
	}
	rp.para("bench/ (`BenchmarkHitRatio`, bench/doc.go): each cache replays the same Zipf request sequence " +
		"in-process, read-through (a miss is followed by a Set), at a DRAM budget of 10%% of the key space's bytes, " +
		"each charged key + value bytes per item; no cold tier. tiercache-policy is tiercache's W-TinyLFU over a " +
		"plain map, tiercache-dram the whole hot + warm tiers. Hit %%, median of the runs with their range; the " +
		"last column is tiercache-dram's median against otter's, in points.")
	var trs [][]string
	var hl []string
	for _, r := range rows {
		tr := []string{r.workload}
		for _, c := range hitCaches {
			tr = append(tr, r.hit[c].format(2))
		}
		d := "–"
		if t, o := r.hit["tiercache-dram"], r.hit["otter"]; t.ok() && o.ok() {
			d = fmt.Sprintf("**%+.2f**", t.med-o.med)
			hl = append(hl, fmt.Sprintf("%s %+.2f", r.workload, t.med-o.med))
		}
		trs = append(trs, append(tr, d))
	}
	rp.table(append(append([]string{"workload"}, hitCaches...), "tiercache-dram − otter, points"), trs)
	if len(hl) > 0 {
		rp.bullets = append(rp.bullets, "hit ratio at equal bytes against otter, in points: "+strings.Join(hl, ", "))
	}
	if len(order) == 0 {
		return
	}
	rp.para("Hit %% over the DRAM budget (`BenchmarkHitRatioCurve`), the same caches and sequences:")
	var panels []linePanel
	for _, w := range order {
		pn := linePanel{title: w}
		for _, c := range []string{"ristretto", "otter", "tiercache-dram"} {
			s := lineSeries{name: c}
			for _, pt := range curves[w] {
				if h, ok := pt.hit[c]; ok {
					s.xs, s.ys = append(s.xs, pt.pct), append(s.ys, h)
				}
			}
			if len(s.xs) > 0 {
				pn.series = append(pn.series, s)
			}
		}
		panels = append(panels, pn)
		var cr [][]string
		for _, pt := range curves[w] {
			row := []string{fmt.Sprintf("%g%%", pt.pct)}
			for _, c := range []string{"ristretto", "otter", "tiercache-dram"} {
				if h, ok := pt.hit[c]; ok {
					row = append(row, fmt.Sprintf("%.2f", h))
				} else {
					row = append(row, "–")
				}
			}
			cr = append(cr, row)
		}
		rp.para("%s:", w)
		rp.table([]string{"budget, % of the key space", "ristretto", "otter", "tiercache-dram"}, cr)
	}
	rp.chart("bench-hitcurve.png", "hit ratio over the DRAM budget: tiercache, otter and ristretto", func(path string) error {
		return lineChart(path, "DRAM budget, % of the key space's bytes", "hit %", panels)
	})
}
