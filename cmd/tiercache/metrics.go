package main

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tiercache/tiercache/server"
	"github.com/tiercache/tiercache/tier"
)

// metrics holds the Prometheus registry; cache and server state is pulled
// on each scrape (collector), command latencies are pushed (histograms).
type metrics struct {
	reg    *prometheus.Registry
	cmdLat *prometheus.HistogramVec
	mu     sync.Mutex
	cache  *tier.Cache
	srv    *server.Server
	descs  map[string]*prometheus.Desc
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), descs: map[string]*prometheus.Desc{}}
	m.cmdLat = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "tiercache", Name: "command_duration_seconds",
		Help:    "Time to execute one command, by command (reply not yet flushed).",
		Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12), // 1 µs .. ~4 s
	}, []string{"command"})
	m.reg.MustRegister(m.cmdLat,
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC, collectors.MetricsMemory, collectors.MetricsScheduler)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m)
	return m
}

// observe is server.Options.ObserveLatency.
func (m *metrics) observe(cmd string) func(time.Duration) {
	o := m.cmdLat.WithLabelValues(cmd)
	return func(d time.Duration) { o.Observe(d.Seconds()) }
}

func (m *metrics) attach(c *tier.Cache, s *server.Server) {
	m.mu.Lock()
	m.cache, m.srv = c, s
	m.mu.Unlock()
}

var metricHelp = []struct {
	name, help string
	labels     []string
}{
	{"tier_hits_total", "Reads served by each tier.", []string{"tier"}},
	{"tier_misses_total", "Reads that fell through each tier.", []string{"tier"}},
	{"tier_items", "Items held by each tier (-1 unknown).", []string{"tier"}},
	{"tier_bytes", "Bytes held by each tier (-1 unknown).", []string{"tier"}},
	{"tier_evictions_total", "Items evicted from each tier.", []string{"tier"}},
	{"keys", "Keys in the cache.", nil},
	{"promotions_total", "Warm and cold hits copied to a faster tier.", nil},
	{"demotions_total", "Hot evictions written to a slower tier.", nil},
	{"demote_waits_total", "Hot evictions that waited for room in the demotion queue.", nil},
	{"demote_drops_total", "Hot evictions dropped because shutdown had stopped the demotions.", nil},
	{"cold_kept_total", "Hot or warm evictions not written to cold because cold held that version already.", nil},
	{"lost_total", "Keys forgotten because their only copy was dropped or failed.", nil},
	{"directory_forgotten_total", "Keys held only in cold that the directory forgot to stay within cold.directory_keys (read again from cold).", nil},
	{"flusher_queue_items", "Items waiting in the flusher queue.", nil},
	{"flusher_queue_bytes", "Bytes waiting in the flusher queue.", nil},
	{"flusher_batches_total", "Device submissions made by the flusher.", nil},
	{"flusher_written_total", "Items the cold store acknowledged.", nil},
	{"flusher_bytes_total", "Bytes the cold store acknowledged.", nil},
	{"flusher_drops_total", "Cold admissions dropped because the flusher was behind.", nil},
	{"flusher_rejected_total", "Cold admissions refused by the flash write budget.", nil},
	{"flusher_errors_total", "Cold writes that failed (the items are dropped: see lost_total).", nil},
	{"cold_errors_total", "Cold-tier errors: reads served as misses, writes dropped.", nil},
	{"cold_writable", "1 while the cold store takes writes; 0 without a cold tier or after a failed write (until restart; INFO tiers cold_write_error says why).", nil},
	{"device_bytes_written_total", "Bytes written to the cold device.", nil},
	{"device_bytes_read_total", "Bytes read from the cold device.", nil},
	{"cold_free_bytes", "Free space reported by the cold backend.", nil},
	{"cold_stalled_io_total", "Cold device I/O that stayed in flight longer than cold.stall_after (a kernel or device problem).", nil},
	{"cold_oldest_io_seconds", "Age of the oldest cold device I/O in flight (sampled every second).", nil},
	{"warm_numa_node", "NUMA node the warm arena is bound to (-1 unbound).", nil},
	{"warm_placement_ratio", "Fraction of sampled warm pages resident on the warm node.", nil},
	{"connected_clients", "Open client connections.", nil},
	{"connections_total", "Client connections accepted.", nil},
	{"rejected_connections_total", "Connections refused at the client limit.", nil},
	{"commands_total", "Commands processed.", nil},
	{"protocol_errors_total", "Connections closed for a protocol error.", nil},
	{"output_limit_disconnections_total", "Connections closed because their unread replies passed server.max_output_buffer.", nil},
	{"cold_get_batches_total", "Pipelined GETs answered together after a GET that read the cold device.", nil},
	{"cold_get_batched_total", "GETs answered in such batches.", nil},
}

func (m *metrics) desc(name string) *prometheus.Desc {
	if d, ok := m.descs[name]; ok {
		return d
	}
	for _, h := range metricHelp {
		if h.name == name {
			d := prometheus.NewDesc("tiercache_"+h.name, h.help, h.labels, nil)
			m.descs[name] = d
			return d
		}
	}
	panic("metrics: undeclared metric " + name)
}

// Describe sends every descriptor (a checked collector).
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range metricHelp {
		ch <- m.desc(h.name)
	}
}

// Collect pulls the cache's and the server's counters.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, s := m.cache, m.srv
	counter := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(m.desc(name), prometheus.CounterValue, v, labels...)
	}
	gauge := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(m.desc(name), prometheus.GaugeValue, v, labels...)
	}
	if c != nil {
		st := c.Stats()
		for _, l := range st.Tiers {
			counter("tier_hits_total", float64(l.Hits), l.Name)
			counter("tier_misses_total", float64(l.Misses), l.Name)
			gauge("tier_items", float64(l.Items), l.Name)
			gauge("tier_bytes", float64(l.Bytes), l.Name)
			counter("tier_evictions_total", float64(l.Evictions), l.Name)
		}
		gauge("keys", float64(st.Keys))
		counter("promotions_total", float64(st.Promotions))
		counter("demotions_total", float64(st.Demotions))
		counter("demote_waits_total", float64(st.DemoteWaits))
		counter("demote_drops_total", float64(st.DemoteDrops))
		counter("cold_kept_total", float64(st.ColdKept))
		counter("lost_total", float64(st.Lost))
		counter("directory_forgotten_total", float64(st.Forgotten))
		gauge("flusher_queue_items", float64(st.Flusher.Queue))
		gauge("flusher_queue_bytes", float64(st.Flusher.QueueBytes))
		counter("flusher_batches_total", float64(st.Flusher.Batches))
		counter("flusher_written_total", float64(st.Flusher.Written))
		counter("flusher_bytes_total", float64(st.Flusher.Bytes))
		counter("flusher_drops_total", float64(st.Flusher.Drops))
		counter("flusher_rejected_total", float64(st.Flusher.Rejected))
		counter("flusher_errors_total", float64(st.Flusher.Errors))
		counter("cold_errors_total", float64(st.ColdErrors))
		writable := 0.0
		if st.ColdWritable() {
			writable = 1
		}
		gauge("cold_writable", writable)
		counter("device_bytes_written_total", float64(st.ColdBytesWritten))
		counter("device_bytes_read_total", float64(st.ColdBytesRead))
		gauge("cold_free_bytes", float64(st.ColdFreeBytes))
		counter("cold_stalled_io_total", float64(st.ColdStalledIO))
		gauge("cold_oldest_io_seconds", st.ColdOldestIO.Seconds())
		gauge("warm_numa_node", float64(st.WarmNode))
		gauge("warm_placement_ratio", st.WarmPlacement)
	}
	if s != nil {
		ss := s.Stats()
		gauge("connected_clients", float64(ss.ConnectedClients))
		counter("connections_total", float64(ss.TotalConnections))
		counter("rejected_connections_total", float64(ss.RejectedConns))
		counter("commands_total", float64(ss.CommandsProcessed))
		counter("protocol_errors_total", float64(ss.ProtocolErrors))
		counter("output_limit_disconnections_total", float64(ss.OutputLimitCloses))
		counter("cold_get_batches_total", float64(ss.ColdGetBatches))
		counter("cold_get_batched_total", float64(ss.ColdGetBatched))
	}
}
