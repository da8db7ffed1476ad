package main

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tiercache/tiercache/server"
	"github.com/tiercache/tiercache/tier"
)

// metricNamespace prefixes every tiercache metric: tiercache_<name>.
const metricNamespace = "tiercache"

// metrics holds the Prometheus registry; cache and server state is pulled
// on each scrape (collector) through server's stats table, command
// latencies are pushed (histograms, cmdlatency.go).
type metrics struct {
	reg   *prometheus.Registry
	lat   *cmdLatency    // per command and per family
	mem   *memoryMetrics // INFO memory's budgets
	stats []tableMetric
	// remoteLat is the remote tier's round-trip latency histogram, made
	// from the store's cumulative bucket counts on each scrape.
	remoteLat *prometheus.Desc
	mu        sync.Mutex
	srv       *server.Server
}

// tableMetric is a row of server's stats table exported on /metrics.
type tableMetric struct {
	server.Stat
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), lat: newCmdLatency(), mem: newMemoryMetrics()}
	for _, r := range server.StatTable() {
		if r.Metric == "" {
			continue // INFO only
		}
		var labels []string
		if r.Label != "" {
			labels = []string{r.Label}
		}
		typ := prometheus.GaugeValue
		if r.Kind == server.StatCounter {
			typ = prometheus.CounterValue
		}
		m.stats = append(m.stats, tableMetric{Stat: r, typ: typ,
			desc: prometheus.NewDesc(prometheus.BuildFQName(metricNamespace, "", r.Metric), r.Help, labels, nil)})
	}
	m.remoteLat = prometheus.NewDesc(prometheus.BuildFQName(metricNamespace, "", "remote_latency_seconds"),
		"Round trips to the remote tier (reads and writes), by duration.", nil, nil)
	m.reg.MustRegister(m.lat, m.mem,
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC, collectors.MetricsMemory, collectors.MetricsScheduler,
			cpuClasses)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m)
	return m
}

// cpuClasses exports runtime/metrics' /cpu/classes/... estimates
// (go_cpu_classes_gc_total_cpu_seconds_total and the rest): the share of
// the CPU the collector takes, against process_cpu_seconds_total.
var cpuClasses = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/cpu/classes/.*`)}

// observe is server.Options.ObserveLatency.
func (m *metrics) observe(cmd string) func(time.Duration, int) { return m.lat.observer(cmd) }

// attach makes s (and its cache) the source of the scraped counters; nil
// detaches it, and the cache with it (attachCache).
func (m *metrics) attach(s *server.Server) {
	m.mu.Lock()
	m.srv = s
	m.mu.Unlock()
	if s == nil {
		m.mem.attach(nil)
	}
}

// attachCache makes the open cache the source of the memory figures.
func (m *metrics) attachCache(c *tier.Cache) { m.mem.attach(c) }

// Describe sends every descriptor (a checked collector).
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, r := range m.stats {
		ch <- r.desc
	}
	ch <- m.remoteLat
}

// Collect pulls the cache's and the server's counters: one snapshot, every
// row of the stats table.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.srv == nil {
		return
	}
	snap := m.srv.Snapshot()
	for i := range m.stats {
		r := &m.stats[i]
		r.Each(&snap, func(label string, v server.StatValue) {
			if r.Label == "" {
				ch <- prometheus.MustNewConstMetric(r.desc, r.typ, v.Number)
			} else {
				ch <- prometheus.MustNewConstMetric(r.desc, r.typ, v.Number, label)
			}
		})
	}
	if rs := snap.Cache.Remote.Store; snap.Cache.Remote.Backend != "" {
		buckets := make(map[float64]uint64, len(rs.LatencyBounds))
		for i, b := range rs.LatencyBounds {
			buckets[b.Seconds()] = rs.LatencyCounts[i]
		}
		ch <- prometheus.MustNewConstHistogram(m.remoteLat, rs.LatencyCount, rs.LatencySum.Seconds(), buckets)
	}
}

// metricsListenError is metrics.listen's failure; an address in use says
// how to choose another (C15).
func metricsListenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("metrics.listen %s: %w by another process (another tiercache?): set metrics.listen "+
			"(-metrics, TIERCACHE_METRICS_LISTEN) to a free address, or off: %w", addr, errMetricsInUse, err)
	}
	return fmt.Errorf("metrics listener %s: %w", addr, err)
}
