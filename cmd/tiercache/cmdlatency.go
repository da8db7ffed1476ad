package main

import (
	"maps"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Command latencies: one latencyHist per command, observed by the server
// after each command, or once for a pipelined run of the same command
// (server.Options.ObserveLatency, server S51) and exported when
// scraped as tiercache_command_duration_seconds{command} and, summed by
// family (commandFamilies), tiercache_command_family_duration_seconds{family}
// (C17). An observation is two atomic adds on integers: no float, no
// search, no compare-and-swap loop; what it costs per GET and SET is
// measured by BenchmarkObserveLatency and scripts/bench-metrics.

// latencyBounds are the histograms' upper bounds: 1 µs × 4^i, i = 0..11
// (1 µs to 4.19 s), then +Inf.
const latencyBounds = 12

// latencyBoundSeconds are the bounds as exported.
var latencyBoundSeconds = prometheus.ExponentialBuckets(1e-6, 4, latencyBounds)

// latencyBucket is the bucket of a duration of ns nanoseconds: the
// smallest i with ns <= 1000·4^i, latencyBounds past the last bound.
// ns <= 1000·4^i ⇔ ceil(ns/1000) <= 4^i = 2^(2i) ⇔ 2i >= bits.Len(ceil(ns/1000)-1).
func latencyBucket(ns uint64) int {
	if ns <= 1000 {
		return 0
	}
	q := (ns + 999) / 1000
	return min((bits.Len64(q-1)+1)/2, latencyBounds)
}

// latencyHist is one command's histogram: counts per bucket (not
// cumulative) and the sum in nanoseconds. 128 bytes, so two commands'
// histograms never share a cache line.
type latencyHist struct {
	counts   [latencyBounds + 1]atomic.Uint64
	sumNanos atomic.Uint64
	_        [128 - (latencyBounds+2)*8]byte
}

// observe records n executions of a command, of time d each.
func (h *latencyHist) observe(d time.Duration, n int) {
	ns := uint64(max(d, 0))
	h.counts[latencyBucket(ns)].Add(uint64(n))
	h.sumNanos.Add(ns * uint64(n))
}

// histSum is a histogram read out: cumulative counts as exported.
type histSum struct {
	buckets  [latencyBounds + 1]uint64 // per bucket, not cumulative
	sumNanos uint64
}

func (s *histSum) add(h *latencyHist) {
	for i := range h.counts {
		s.buckets[i] += h.counts[i].Load()
	}
	s.sumNanos += h.sumNanos.Load()
}

// metric is s as a Prometheus histogram: its count is its buckets' sum,
// so the two always agree.
func (s *histSum) metric(desc *prometheus.Desc, label string) prometheus.Metric {
	cum := make(map[float64]uint64, latencyBounds)
	var n uint64
	for i, b := range latencyBoundSeconds {
		n += s.buckets[i]
		cum[b] = n
	}
	n += s.buckets[latencyBounds]
	return prometheus.MustNewConstHistogram(desc, n, float64(s.sumNanos)/1e9, cum, label)
}

// cmdLatency holds every command's histogram and exports them.
type cmdLatency struct {
	perCmd, perFamily *prometheus.Desc
	mu                sync.Mutex
	cmds              map[string]*latencyHist
}

func newCmdLatency() *cmdLatency {
	return &cmdLatency{
		perCmd: prometheus.NewDesc(prometheus.BuildFQName(metricNamespace, "", "command_duration_seconds"),
			"Time to execute one command, by command (reply not yet flushed).", []string{"command"}, nil),
		perFamily: prometheus.NewDesc(prometheus.BuildFQName(metricNamespace, "", "command_family_duration_seconds"),
			"Time to execute one command, by command family (tiercache_command_duration_seconds summed by family).",
			[]string{"family"}, nil),
		cmds: map[string]*latencyHist{},
	}
}

// observer returns the function that records cmd's times (one histogram
// per command however often it is asked).
func (l *cmdLatency) observer(cmd string) func(time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.cmds[cmd]
	if h == nil {
		h = new(latencyHist)
		l.cmds[cmd] = h
	}
	return h.observe
}

// Describe sends both descriptors (a checked collector).
func (l *cmdLatency) Describe(ch chan<- *prometheus.Desc) {
	ch <- l.perCmd
	ch <- l.perFamily
}

// Collect reads each command's histogram once, for its own series and
// for its family's.
func (l *cmdLatency) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fams := map[string]*histSum{}
	for _, cmd := range slices.Sorted(maps.Keys(l.cmds)) {
		var s histSum
		s.add(l.cmds[cmd])
		ch <- s.metric(l.perCmd, cmd)
		fam := commandFamily(cmd)
		if fams[fam] == nil {
			fams[fam] = new(histSum)
		}
		f := fams[fam]
		for i := range f.buckets {
			f.buckets[i] += s.buckets[i]
		}
		f.sumNanos += s.sumNanos
	}
	for _, fam := range slices.Sorted(maps.Keys(fams)) {
		ch <- fams[fam].metric(l.perFamily, fam)
	}
}
