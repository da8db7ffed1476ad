package server

import (
	"slices"
	"testing"
	"time"
)

// TestLatencyHistogramIsRedis is S108: a latency histogram counts and
// answers as redis-server 7.0's hdr_histogram (1 ns..1 s, 2 significant
// digits) does with the same times: the percentiles INFO latencystats
// printed for them (4 µs → 4.015, 82 µs → 82.431, 40 and 135 µs → p50
// 40.191, p99 135.167, 1 µs → 1.003; DEBUG SLEEP 1.1, 0.6 and 0.55 →
// p50 603979.775, p99 1002438.655), LATENCY HISTOGRAM's bucket for each
// (4 µs at 4, 82 µs at 132, 22 µs at 33) and its 21 bounds, times out of
// range clamped to 1 ns and 1 s, and the percentiles' names.
func TestLatencyHistogramIsRedis(t *testing.T) {
	one := func(ns ...time.Duration) *histView {
		var st cmdStats
		for _, d := range ns {
			st.record(d, 1)
		}
		return st.hist.Load().view()
	}
	for ns, want := range map[time.Duration]uint64{4000: 4015, 82000: 82431, 1000: 1003, 5000: 5023, 22000: 22015, 6000: 6015} {
		v := one(ns)
		for _, p := range []float64{50, 99, 99.9, 100} {
			if got := v.percentile(p); got != want {
				t.Errorf("p%v of one %v: %d ns, want %d", p, ns, got, want)
			}
		}
		if got := v.percentile(0); got > uint64(ns) { // the lowest time counted with it
			t.Errorf("p0 of one %v: %d", ns, got)
		}
	}
	v := one(40000, 135000)
	if p50, p99 := formatMicros(v.percentile(50)), formatMicros(v.percentile(99)); p50 != "40.191" || p99 != "135.167" {
		t.Errorf("40 and 135 µs: p50=%s p99=%s, want 40.191 and 135.167", p50, p99)
	}
	v = one(1100*time.Millisecond, 600*time.Millisecond, 550*time.Millisecond) // DEBUG SLEEP 1.1, 0.6, 0.55 on redis-server 7.0
	if p50, p99 := formatMicros(v.percentile(50)), formatMicros(v.percentile(99)); p50 != "603979.775" || p99 != "1002438.655" || !slices.Equal(v.cdf(), []cdfStep{{1073741, 3}}) {
		t.Errorf("1.1, 0.6 and 0.55 s: p50=%s p99=%s %v, want 603979.775, 1002438.655, 3 at 1073741", p50, p99, v.cdf())
	}
	for ns, want := range map[time.Duration]int64{4000: 4, 82000: 132, 22000: 33, 8000: 8, 0: 1, 1032: 2, 1031: 1, 5 * time.Second: 1073741} {
		if got := one(ns).cdf(); !slices.Equal(got, []cdfStep{{want, 1}}) {
			t.Errorf("one %v: histogram %v, want %d µs", ns, got, want)
		}
	}
	var all []time.Duration
	for k := range 20 {
		all = append(all, time.Duration(1024<<k))
	}
	all = append(all, time.Second)
	var bounds []int64
	for i, s := range one(all...).cdf() {
		bounds = append(bounds, s.usec)
		if s.calls != int64(i+1) {
			t.Errorf("bucket %d µs: %d calls, want %d", s.usec, s.calls, i+1)
		}
	}
	if !slices.Equal(bounds, histogramBounds) {
		t.Errorf("bounds %v, want %v", bounds, histogramBounds)
	}
	var st cmdStats
	st.record(3000, 16) // a pipelined run of 16 (S51)
	if v := st.hist.Load().view(); v.total != 16 || !slices.Equal(v.cdf(), []cdfStep{{4, 16}}) {
		t.Errorf("a run of 16: %d calls, %v", v.total, v.cdf())
	}
	for p, want := range map[float64]string{50: "50", 99.9: "99.9", 0: "0", 99.99: "99.99", 25.5: "25.5", 100: "100"} {
		if got := percentileName(p); got != want {
			t.Errorf("percentileName(%v) = %q, want %q", p, got, want)
		}
	}
}

// TestLatencyEvents (S107): an event keeps one sample a second, the
// second's longest, and the last 160 of them, oldest first, with its all
// time high; a command flagged fast (or a subcommand) samples
// "fast-command", another "command", only at or past the threshold.
func TestLatencyEvents(t *testing.T) {
	var m latencyMonitor
	o := Options{}
	o.EnsureDefaults()
	m.init(&o)
	for sec := int64(1); sec <= 200; sec++ {
		m.addSample("e", sec%7, sec)
		m.addSample("e", 100+sec%7, sec) // same second, longer: replaces it
		m.addSample("e", 1, sec)         // shorter: kept out
	}
	ev := m.snapshot("e", false)[0]
	if len(ev.samples) != latencySeriesLen || ev.samples[0].unix != 41 || ev.latest().unix != 200 || ev.latest().ms != 100+200%7 || ev.max != 106 {
		t.Fatalf("series: %d samples, first %v, last %v, max %d", len(ev.samples), ev.samples[0], ev.latest(), ev.max)
	}
	if n := m.reset([]string{"E", "e"}); n != 1 || len(m.snapshot("", true)) != 0 {
		t.Fatalf("reset: %d", n)
	}

	s, _ := startServer(t, nil)
	s.commandEvent(s.cmds["get"], &s.cmds["get"].stats, time.Hour) // monitor off
	if evs := s.lat.snapshot("", true); len(evs) != 0 {
		t.Fatalf("sampled while off: %v", evs)
	}
	s.lat.setThreshold(5)
	cfg := s.cmds["config"]
	s.commandEvent(s.cmds["get"], &s.cmds["get"].stats, 4*time.Millisecond) // below
	s.commandEvent(s.cmds["get"], &s.cmds["get"].stats, 5*time.Millisecond)
	s.commandEvent(cfg, &cfg.subs["get"].stats, 7*time.Millisecond)
	var got []string
	for _, ev := range s.lat.snapshot("", true) {
		got = append(got, ev.name)
		if len(ev.samples) != 1 {
			t.Errorf("%s: %v", ev.name, ev.samples)
		}
	}
	if !slices.Equal(got, []string{"command", "fast-command"}) {
		t.Errorf("events %v", got)
	}
}

// BenchmarkLatencyRecord is what latency tracking adds to an observed run
// (S108): the tracking flag, the histogram's pointer, its index and one
// atomic add.
func BenchmarkLatencyRecord(b *testing.B) {
	var m latencyMonitor
	o := Options{}
	o.EnsureDefaults()
	m.init(&o)
	var st cmdStats
	d := time.Duration(1500)
	for b.Loop() {
		if m.tracking.Load() {
			st.record(d, 1)
		}
		d ^= 0x3ff
	}
}

// TestLatencyGraphIsRedis (S107): LATENCY GRAPH and DOCTOR's figures of
// six samples are redis-server 7.0's for the same samples (DEBUG SLEEP
// 0.005, 0.030, 0.012, 0.060, 0.002, 0.045 a second apart, threshold 1 ms;
// its GRAPH one second after the last).
func TestLatencyGraphIsRedis(t *testing.T) {
	ev := latencyEvent{name: "command", max: 60}
	for i, ms := range []int64{5, 30, 12, 60, 2, 45} {
		ev.samples = append(ev.samples, latencySample{unix: 1796653048 + int64(i), ms: ms})
	}
	want := "command - high 60 ms, low 2 ms (all time high 60 ms)\n" +
		"--------------------------------------------------------------------------------\n" +
		"   #  \n" +
		"   | #\n" +
		" # | |\n" +
		"_|#|_|\n" +
		"      \n" +
		"654321\n" +
		"ssssss\n"
	if got := latencyGraph(&ev, 1796653054); got != want {
		t.Errorf("GRAPH:\n%s\nwant\n%s", got, want)
	}
	if n, avg, mad, period := ev.stats(1796653054); n != 6 || avg != 25 || mad != 19 || period != 6 {
		t.Errorf("DOCTOR's figures: %d samples, average %d, deviation %d, period %d; want 6, 25, 19, 6", n, avg, mad, period)
	}
}
