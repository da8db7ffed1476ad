package main

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestEveryCommandHasAFamily (C17): every command the server times is in
// one family of commandFamilies (none is "other"), and every command a
// family lists is one the server has.
func TestEveryCommandHasAFamily(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	l := sc.met.lat
	l.mu.Lock()
	defer l.mu.Unlock()
	timed := map[string]bool{}
	for c := range l.cmds {
		timed[c] = true
		if commandFamily(c) == otherFamily {
			t.Errorf("command %q has no family: add it to commandFamilies (cmd/tiercache/cmdfamily.go)", c)
		}
	}
	for fam, cmds := range commandFamilies {
		for _, c := range cmds {
			if !timed[c] {
				t.Errorf("family %s lists %q, which the server does not have", fam, c)
			}
		}
	}
}

// TestFamilyHistogramSumsCommands (C17): on the real sidecar, each
// family's histogram is its commands' histograms summed: the same count,
// sum and cumulative bucket counts.
func TestFamilyHistogramSumsCommands(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	ctx := context.Background()
	rc := newClient(t, sc, 2)
	for i := range 50 {
		rc.Set(ctx, "k", i, 0)
		rc.Get(ctx, "k")
		rc.MGet(ctx, "k", "nope")
		rc.HSet(ctx, "h", "f", i)
		rc.LPush(ctx, "l", i)
		rc.Expire(ctx, "k", time.Hour)
	}
	fams, err := sc.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	type hist struct {
		count   uint64
		sum     float64
		buckets []uint64
	}
	add := func(h *hist, m *dto.Histogram) {
		h.count += m.GetSampleCount()
		h.sum += m.GetSampleSum()
		if h.buckets == nil {
			h.buckets = make([]uint64, len(m.GetBucket()))
		}
		for i, b := range m.GetBucket() {
			h.buckets[i] += b.GetCumulativeCount()
		}
	}
	want, got := map[string]*hist{}, map[string]*hist{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				switch {
				case f.GetName() == metricNamespace+"_command_duration_seconds" && l.GetName() == "command":
					fam := commandFamily(l.GetValue())
					if want[fam] == nil {
						want[fam] = &hist{}
					}
					add(want[fam], m.GetHistogram())
				case f.GetName() == metricNamespace+"_command_family_duration_seconds" && l.GetName() == "family":
					if got[l.GetValue()] != nil {
						t.Errorf("family %s twice", l.GetValue())
					}
					got[l.GetValue()] = &hist{}
					add(got[l.GetValue()], m.GetHistogram())
				}
			}
		}
	}
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("families %d, want %d (one per family of the commands timed)", len(got), len(want))
	}
	for fam, w := range want {
		g := got[fam]
		if g == nil || g.count != w.count || math.Abs(g.sum-w.sum) > 1e-9*w.sum || !slices.Equal(g.buckets, w.buckets) {
			t.Errorf("family %s: %+v, want the sum of its commands %+v", fam, g, w)
		}
	}
	for _, fam := range []string{"string_read", "string_write", "hash", "list", "keyspace"} {
		if got[fam] == nil || got[fam].count < 50 {
			t.Errorf("family %s observed %+v, want at least the 50 commands sent", fam, got[fam])
		}
	}
}

// TestLatencyHistMatchesPrometheus: a command's histogram, fed the same
// durations as client_golang's own histogram with the same bounds (the
// reference), exports the same count, cumulative buckets and sum;
// durations on, just under and just over every bound included, some
// observed 2 or 3 at a time (a pipelined run).
func TestLatencyHistMatchesPrometheus(t *testing.T) {
	l := newCmdLatency()
	obs := l.observer("get")
	ref := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ref", Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12)})
	var ds []time.Duration
	for i := range 12 {
		b := time.Duration(1000) << (2 * i)
		ds = append(ds, b-1, b, b+1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		ds = append(ds, time.Duration(math.Exp(rng.Float64()*math.Log(1e10)))) // 1 ns .. 10 s, log-uniform
	}
	ds = append(ds, 0, -5, time.Hour)
	for i, d := range ds {
		n := 1 + i%3 // n executions observed together, as pipelined commands are
		obs(d, n)
		for range n {
			ref.Observe(max(d, 0).Seconds())
		}
	}
	var want dto.Metric
	if err := ref.Write(&want); err != nil {
		t.Fatal(err)
	}
	ch := make(chan prometheus.Metric, 8)
	l.Collect(ch)
	close(ch)
	var got dto.Metric
	if err := (<-ch).Write(&got); err != nil {
		t.Fatal(err)
	}
	g, w := got.GetHistogram(), want.GetHistogram()
	if g.GetSampleCount() != w.GetSampleCount() || math.Abs(g.GetSampleSum()-w.GetSampleSum()) > 1e-9*w.GetSampleSum() {
		t.Errorf("count %d sum %v, want %d %v", g.GetSampleCount(), g.GetSampleSum(), w.GetSampleCount(), w.GetSampleSum())
	}
	if len(g.GetBucket()) != len(w.GetBucket()) {
		t.Fatalf("%d buckets, want %d", len(g.GetBucket()), len(w.GetBucket()))
	}
	for i, b := range w.GetBucket() {
		if gb := g.GetBucket()[i]; gb.GetUpperBound() != b.GetUpperBound() || gb.GetCumulativeCount() != b.GetCumulativeCount() {
			t.Errorf("bucket le=%v: %d, want le=%v: %d", gb.GetUpperBound(), gb.GetCumulativeCount(), b.GetUpperBound(), b.GetCumulativeCount())
		}
	}
}

// BenchmarkObserveLatency is the cost per command of recording its time
// (what ObserveLatency's function does; the clock read is the server's):
// alone, and from every P at once on one command's histogram, as
// concurrent GETs do; and the same with client_golang's histogram, which
// the sidecar used before latencyHist, for the ratio.
func BenchmarkObserveLatency(b *testing.B) {
	get := newMetrics().observe("get")
	obs := func(d time.Duration) { get(d, 1) }
	b.Run("latencyHist", func(b *testing.B) { benchObserve(b, obs) })
	// What the server adds per command: one clock read (time.Since of a
	// monotonic start, as server's clock) and the observation.
	start := time.Now()
	b.Run("clock+latencyHist", func(b *testing.B) { benchObserve(b, func(time.Duration) { obs(time.Since(start)) }) })
	ref := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ref", Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12)})
	b.Run("client_golang", func(b *testing.B) { benchObserve(b, func(d time.Duration) { ref.Observe(d.Seconds()) }) })
}

func benchObserve(b *testing.B, obs func(time.Duration)) {
	b.Run("serial", func(b *testing.B) {
		for i := range b.N {
			obs(time.Duration(i & 1023))
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				obs(time.Duration(i & 1023))
				i++
			}
		})
	})
}
