package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// hitConfig is what the environment asks of a hit-ratio benchmark (see
// doc.go for the variables).
type hitConfig struct {
	runs    int     // TIERCACHE_BENCH_RUNS: runs of each cache on the same sequence
	hotFrac float64 // TIERCACHE_BENCH_HOTFRAC: tiercache's hot share of the budget
	cold    bool    // TIERCACHE_BENCH_COLD=1: add the tiercache+cold line
	busy    bool    // TIERCACHE_BENCH_BUSY=1: both cores busy (busy_test.go)
}

func loadHitConfig() hitConfig {
	c := hitConfig{runs: 1, hotFrac: 0.25, cold: os.Getenv("TIERCACHE_BENCH_COLD") == "1",
		busy: os.Getenv("TIERCACHE_BENCH_BUSY") == "1"}
	if n, err := strconv.Atoi(os.Getenv("TIERCACHE_BENCH_RUNS")); err == nil && n > 0 {
		c.runs = n
	}
	if f, err := strconv.ParseFloat(os.Getenv("TIERCACHE_BENCH_HOTFRAC"), 64); err == nil && f > 0 && f < 1 {
		c.hotFrac = f
	}
	return c
}

func (c hitConfig) machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	l := strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " ")
	if c.busy {
		return fmt.Sprintf("both cores busy (%d burners), load %s", runtime.NumCPU(), l)
	}
	return "no burner, load " + l
}

// hitSizes are the key space and request count at TIERCACHE_BENCH_SCALE
// (1M keys and 10M Zipf requests at scale 1), and the bytes of the whole
// key space at itemCost each.
func hitSizes() (nkeys, nreq int, spaceBytes int64) {
	s := scale()
	nkeys, nreq = int(1_000_000*s), int(10_000_000*s)
	return nkeys, nreq, int64(nkeys) * (keyBytes + valueBytes)
}

// BenchmarkHitRatio: the three workloads of issue 17 item 2 (workload.go)
// at a budget of 10% of the key space's bytes, each cache on the same
// sequence, read-through (a miss is followed by a Set of the key).
func BenchmarkHitRatio(b *testing.B) {
	cfg := loadHitConfig()
	startBusy(b, cfg.busy)
	nkeys, nreq, space := hitSizes()
	budget := space / 10
	scanLen := int(scanCapFrac * float64(budget/(keyBytes+valueBytes)))
	caches := []string{cacheRistretto, cacheOtter, cachePolicy, cacheTierDRAM}
	if cfg.cold {
		caches = append(caches, cacheTierCold)
	}
	var ks keyspace
	for _, w := range []workload{zipfWorkload(nkeys, nreq, 0.90), zipfWorkload(nkeys, nreq, 0.99),
		scanWorkload(nkeys, nreq, 0.90, scanLen)} {
		ks.cover(w)
		var rows []series
		for _, name := range caches {
			b.Run(w.name+"/"+name, func(b *testing.B) {
				rows = append(rows, runSeries(b, name, w, ks, budget, cfg))
			})
		}
		if len(rows) == 0 {
			continue
		}
		extra := ""
		if w.name == "scan" {
			extra = fmt.Sprintf(", a scan of %d one-time keys after every %d Zipf requests", scanLen, nreq/scanPeriods)
		}
		fmt.Printf("\n## hit%% %s: budget %d B = 10%% of the key space (%d items of %d B), %d keys, %d requests%s;"+
			" compulsory misses %.2f%%; %d run(s) each; %s\n",
			w.name, budget, budget/(keyBytes+valueBytes), keyBytes+valueBytes, nkeys, len(w.trace), extra,
			100*float64(w.firstSeen())/float64(len(w.trace)), cfg.runs, cfg.machine())
		printSeries(os.Stdout, rows, budget)
	}
}

// curveBudgets are BenchmarkHitRatioCurve's budgets, in % of the key space.
var curveBudgets = []float64{1, 2, 5, 10, 20}

// BenchmarkHitRatioCurve: hit% over memory size, zipf=0.99 and zipf=0.90
// at budgets of 1-20% of the key space's bytes, for the three caches at
// equal bytes (median of TIERCACHE_BENCH_RUNS runs).
func BenchmarkHitRatioCurve(b *testing.B) {
	cfg := loadHitConfig()
	startBusy(b, cfg.busy)
	nkeys, nreq, space := hitSizes()
	caches := []string{cacheRistretto, cacheOtter, cacheTierDRAM}
	var ks keyspace
	for _, theta := range []float64{0.99, 0.90} {
		w := zipfWorkload(nkeys, nreq, theta)
		ks.cover(w)
		cv := curve{workload: w.name, caches: caches}
		for _, pct := range curveBudgets {
			budget := int64(float64(space) * pct / 100)
			pt := curvePoint{pct: pct, budget: budget, hit: map[string]float64{}}
			for _, name := range caches {
				b.Run(fmt.Sprintf("%s/budget=%gpct/%s", w.name, pct, name), func(b *testing.B) {
					s := runSeries(b, name, w, ks, budget, cfg)
					pt.hit[name] = summarize(s.hits()).med
					if name == cacheTierDRAM {
						var tr []float64
						for _, r := range s.runs {
							tr = append(tr, r.during.transit.mean)
						}
						pt.transit = summarize(tr).max / float64(budget/(keyBytes+valueBytes))
					}
				})
			}
			cv.points = append(cv.points, pt)
		}
		if len(cv.points[0].hit) == 0 && len(cv.points[len(cv.points)-1].hit) == 0 {
			continue // filtered out by -bench
		}
		fmt.Printf("\n## hit%% over memory size, %s: %d keys, %d requests; compulsory misses %.2f%%; median of %d run(s); %s\n",
			w.name, nkeys, nreq, 100*float64(w.firstSeen())/float64(nreq), cfg.runs, cfg.machine())
		cv.print(os.Stdout)
	}
}

// runResult is one run of one cache over one workload.
type runResult struct {
	hit, hotHit, warmHit float64 // % of the requests (the tier shares for tiercache only)
	reqPerSec            float64
	held                 int64 // items held at the end (tiercache: hot + warm copies)
	counters             string
	during               occupancy // tiercache only
}

// occupancy is what tiercache holds during a run, sampled every
// sampleEvery requests: the directory's live keys (each has a copy in hot,
// warm or transit) and the copies in transit, which reads are served from
// (T5) but which no tier's budget counts.
type occupancy struct {
	keys, transit struct{ mean, peak float64 }
}

const sampleEvery = 1024

func (o *occupancy) sample(st tier.Stats, n int) {
	add := func(m *struct{ mean, peak float64 }, x float64) {
		m.mean += (x - m.mean) / float64(n)
		m.peak = max(m.peak, x)
	}
	add(&o.keys, float64(st.Keys))
	add(&o.transit, float64(st.InTransit))
}

func (o occupancy) String() string {
	return fmt.Sprintf("during the run (every %d requests): directory keys mean %.0f peak %.0f, in transit mean %.0f peak %.0f",
		sampleEvery, o.keys.mean, o.keys.peak, o.transit.mean, o.transit.peak)
}

// series is one cache's runs over one workload.
type series struct {
	cache string
	runs  []runResult
}

func (s series) hits() []float64 {
	h := make([]float64, len(s.runs))
	for i, r := range s.runs {
		h[i] = r.hit
	}
	return h
}

// runSeries runs one cache cfg.runs times over w (a new cache each time),
// logs each run and reports the median hit%, and with several runs their
// minimum, maximum and spread. Run with -benchtime 1x: a longer benchtime
// repeats the whole series.
func runSeries(b *testing.B, name string, w workload, ks keyspace, budget int64, cfg hitConfig) series {
	var s series
	for b.Loop() {
		s = series{cache: name}
		for i := range cfg.runs {
			r := runOnce(b, name, w, ks, budget, cfg.hotFrac)
			// One line a run: testing keeps only the first 10 lines of a
			// benchmark's log.
			b.Logf("run %d/%d: hit %.2f%% (%.0f req/s, %d items held)%s", i+1, cfg.runs, r.hit, r.reqPerSec, r.held, r.counters)
			s.runs = append(s.runs, r)
		}
	}
	h := summarize(s.hits())
	b.ReportMetric(h.med, "hit%")
	if cfg.runs > 1 {
		b.ReportMetric(h.min, "min-hit%")
		b.ReportMetric(h.max, "max-hit%")
		b.ReportMetric(h.max-h.min, "spread-pts")
	}
	rps := make([]float64, len(s.runs))
	for i, r := range s.runs {
		rps[i] = r.reqPerSec
	}
	b.ReportMetric(summarize(rps).med, "req/s")
	if s.runs[0].counters != "" {
		var hot, warm []float64
		for _, r := range s.runs {
			hot, warm = append(hot, r.hotHit), append(warm, r.warmHit)
		}
		b.ReportMetric(summarize(hot).med, "hot-hit%")
		b.ReportMetric(summarize(warm).med, "warm-hit%")
	}
	return s
}

// runOnce replays w against a new cache: Get, and Set on a miss.
func runOnce(tb testing.TB, name string, w workload, ks keyspace, budget int64, hotFrac float64) runResult {
	runtime.GC() // the previous run's garbage is not this run's work
	cut := openCache(tb, name, budget, hotFrac)
	defer cut.close()
	val := make([]byte, valueBytes)
	hits := 0
	var occ occupancy
	start := time.Now()
	for i, k := range w.trace {
		if cut.get(ks[k]) {
			hits++
		} else {
			cut.set(ks[k], val)
		}
		if cut.tc != nil && i%sampleEvery == 0 {
			occ.sample(cut.tc.Stats(), i/sampleEvery+1)
		}
	}
	el := time.Since(start)
	n := float64(len(w.trace))
	r := runResult{hit: 100 * float64(hits) / n, reqPerSec: n / el.Seconds()}
	if cut.tc == nil {
		r.held = cut.held()
		return r
	}
	settle(cut.tc)
	st := cut.tc.Stats()
	r.held = cut.held()
	r.hotHit = 100 * float64(st.Tiers[0].Hits) / n
	r.warmHit = 100 * float64(st.Tiers[1].Hits) / n
	r.counters = "; " + occ.String() + tierCounters(st)
	r.during = occ
	return r
}

// settle waits (up to 2 s) until no copy is in transit, so that the items
// counted after a run are where they stay.
func settle(c *tier.Cache) {
	for i := 0; i < 400 && c.Stats().InTransit > 0; i++ {
		time.Sleep(5 * time.Millisecond)
	}
}

// tierCounters formats the tier.Stats of a run for the analysis of where
// tiercache loses hits.
func tierCounters(st tier.Stats) string {
	hot := st.Tiers[0]
	var b strings.Builder
	fmt.Fprintf(&b, "; hot: %d items, %d B, %d evictions", hot.Items, hot.Bytes, hot.Evictions)
	if len(st.Tiers) > 1 && st.Tiers[1].Name == "warm" {
		warm := st.Tiers[1]
		fmt.Fprintf(&b, " | warm: %d items, %d B, %d evictions", warm.Items, warm.Bytes, warm.Evictions)
	}
	d := st.DRAM
	fmt.Fprintf(&b, "; set errors %d, forced %d", setErrors.Swap(0), d.Forced)
	fmt.Fprintf(&b, "; keys %d | LFU %d items, %d of %d B, admits %d, rejects %d | promotions %d, demotions %d, rescued %d, compacted %d, dropped %d | lost %d, phantoms %d",
		st.Keys, d.Items, d.Weight, d.Capacity, d.Admits, d.Rejects, st.Promotions, st.Demotions, d.Rescued, d.Compacted, d.Dropped, st.Lost, st.Phantoms)
	if st.ColdBackend != "" {
		fmt.Fprintf(&b, "; cold: %d hits, %d items | flushed %d, flusher drops %d, rejected %d, cold kept %d",
			st.Tiers[len(st.Tiers)-1].Hits, st.Tiers[len(st.Tiers)-1].Items, st.Flushed, st.Flusher.Drops, st.Flusher.Rejected, st.ColdKept)
	}
	return b.String()
}

// spread is the minimum, median and maximum of a series.
type spread struct{ min, med, max float64 }

func summarize(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + med) / 2
	}
	return spread{min: s[0], med: med, max: s[len(s)-1]}
}

// printSeries prints one workload's table: min, median, max and spread of
// hit% per cache, whether the spread is within 1 point, and tiercache-dram
// against otter.
func printSeries(w io.Writer, rows []series, budget int64) {
	fmt.Fprintf(w, "%-44s %7s %7s %7s %7s %5s %11s %10s\n", "cache", "min", "median", "max", "spread", "≤1pt", "req/s", "items")
	med := map[string]spread{}
	for _, s := range rows {
		h := summarize(s.hits())
		med[s.cache] = h
		label := s.cache
		if s.cache == cacheTierCold {
			label += " (NOT equal bytes: +2 GiB cold)"
		}
		rps := make([]float64, len(s.runs))
		var held []float64
		for i, r := range s.runs {
			rps[i] = r.reqPerSec
			held = append(held, float64(r.held))
		}
		ok := "yes"
		if h.max-h.min > 1 {
			ok = "NO"
		}
		fmt.Fprintf(w, "%-44s %7.2f %7.2f %7.2f %7.2f %5s %11.0f %10.0f\n", label, h.min, h.med, h.max, h.max-h.min, ok,
			summarize(rps).med, summarize(held).med)
	}
	t, tok := med[cacheTierDRAM]
	o, ook := med[cacheOtter]
	if tok && ook {
		verdict := "at or above otter"
		if t.med < o.med {
			verdict = "BELOW otter"
		}
		fmt.Fprintf(w, "tiercache-dram − otter: median %+.2f pts (%s), worst case (tiercache min − otter max) %+.2f pts\n",
			t.med-o.med, verdict, t.min-o.max)
		// Copies in transit serve hits outside the budget: say how much of
		// the capacity they added, so that a lead bought that way shows.
		var tr []float64
		for _, s := range rows {
			if s.cache == cacheTierDRAM {
				for _, r := range s.runs {
					tr = append(tr, r.during.transit.mean)
				}
			}
		}
		capItems := float64(budget / (keyBytes + valueBytes))
		if m := summarize(tr).max; m > 0.01*capItems {
			fmt.Fprintf(w, "  NOT at equal bytes: tiercache-dram's copies in transit added up to %.0f%% of the capacity on average over a run\n", 100*m/capItems)
		}
	}
	fmt.Fprintf(w, "(items: held at the end, median; the budget fits %d items at key+value bytes)\n", budget/(keyBytes+valueBytes))
	for _, s := range rows {
		if s.runs[0].counters == "" {
			continue
		}
		var keys, tr, trPeak []float64
		for _, r := range s.runs {
			keys, tr, trPeak = append(keys, r.during.keys.mean), append(tr, r.during.transit.mean), append(trPeak, r.during.transit.peak)
		}
		k, t, p := summarize(keys), summarize(tr), summarize(trPeak)
		fmt.Fprintf(w, "(%s during the runs: directory keys mean %.0f-%.0f, in transit mean %.0f-%.0f, peak %.0f-%.0f: copies in transit are served but charged to no budget)\n",
			s.cache, k.min, k.max, t.min, t.max, p.min, p.max)
	}
}

// curve is one workload's hit% over the curve budgets.
type curve struct {
	workload string
	caches   []string
	points   []curvePoint
}

type curvePoint struct {
	pct    float64
	budget int64
	hit    map[string]float64 // by cache; absent if its run was filtered out
	// transit is tiercache-dram's mean count of copies in transit (charged
	// to no budget) over its capacity in items, the largest of its runs.
	transit float64
}

func (c curve) print(w io.Writer) {
	fmt.Fprintf(w, "%8s %12s", "budget%", "bytes")
	for _, name := range c.caches {
		fmt.Fprintf(w, " %15s", name)
	}
	fmt.Fprintf(w, " %15s %14s\n", "tc-dram − otter", "tc transit/cap")
	for _, p := range c.points {
		fmt.Fprintf(w, "%8g %12d", p.pct, p.budget)
		for _, name := range c.caches {
			if h, ok := p.hit[name]; ok {
				fmt.Fprintf(w, " %15.2f", h)
			} else {
				fmt.Fprintf(w, " %15s", "-")
			}
		}
		t, tok := p.hit[cacheTierDRAM]
		o, ook := p.hit[cacheOtter]
		if tok && ook {
			fmt.Fprintf(w, " %+15.2f", t-o)
		} else {
			fmt.Fprintf(w, " %15s", "-")
		}
		if tok {
			fmt.Fprintf(w, " %13.1f%%\n", 100*p.transit)
		} else {
			fmt.Fprintf(w, " %14s\n", "-")
		}
	}
}
