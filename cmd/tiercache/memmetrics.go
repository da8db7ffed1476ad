package main

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/tier"
)

// memoryRows are INFO memory's figures of the cache's own account
// (tier.Memory) exported on /metrics as gauges, so the dashboard and the
// memory alert can set the process's RSS against the budget (C6).
var memoryRows = []struct {
	info, metric, help string
	value              func(tier.Memory) int64
}{
	{"tier_hot_budget", "memory_hot_budget_bytes", "The hot tier's arena (hot.bytes), off the Go heap.", func(m tier.Memory) int64 { return m.HotBytes }},
	{"tier_warm_arena", "memory_warm_arena_bytes", "The warm tier's arena (warm.bytes), off the Go heap.", func(m tier.Memory) int64 { return m.WarmBytes }},
	{"tier_directory_bytes", "memory_directory_bytes", "Go heap of the key directory (its entries at tier.DirEntryBytes each).", func(m tier.Memory) int64 { return m.DirectoryBytes }},
	{"tier_expiry_index_bytes", "memory_expiry_index_bytes", "Go heap of the index of keys by expiry the sweep visits (16 B a key with an expiry).", func(m tier.Memory) int64 { return m.ExpiryIndexBytes }},
	{"tier_flusher_bytes", "memory_flusher_bytes", "Key and value bytes the flusher holds on the Go heap.", func(m tier.Memory) int64 { return m.FlusherBytes }},
	{"tier_sketch_bytes", "memory_sketch_bytes", "The DRAM eviction policy's frequency sketch.", func(m tier.Memory) int64 { return m.SketchBytes }},
	{"tier_remote_heap_bytes", "memory_remote_heap_bytes", "Go heap of the remote tier: changes queued and in flight, and its client's buffers.", func(m tier.Memory) int64 { return m.RemoteBytes }},
	{"tier_live_heap_bytes", "memory_live_heap_bytes", "Go heap of the aggregates kept live in hot (inside hot.bytes: hot withholds as much of its arena; the Go memory limit adds it to the heap budget).", func(m tier.Memory) int64 { return m.LiveBytes }},
	{"big_bulk_buffer_bytes", "memory_big_bulk_buffer_bytes", "Off-heap buffers big bulks are received into and big cold values are sent from, in use or free (outside hot.bytes and the Go memory limit; free ones are unmapped after 10 s idle).", func(tier.Memory) int64 { return resp.BigBufferBytes() }},
	{"tier_heap_budget", "memory_heap_budget_bytes", "What the Go heap needs: directory, expiry index, flusher, sketch, remote tier and slack.", func(m tier.Memory) int64 { return m.HeapBudget }},
}

// memoryMetrics collects memoryRows from the attached cache (none while
// the cache opens).
type memoryMetrics struct {
	descs []*prometheus.Desc
	mu    sync.Mutex
	cache *tier.Cache
}

func newMemoryMetrics() *memoryMetrics {
	m := &memoryMetrics{}
	for _, r := range memoryRows {
		m.descs = append(m.descs, prometheus.NewDesc(prometheus.BuildFQName(metricNamespace, "", r.metric), r.help, nil, nil))
	}
	return m
}

// attach makes c the source; nil detaches it.
func (m *memoryMetrics) attach(c *tier.Cache) {
	m.mu.Lock()
	m.cache = c
	m.mu.Unlock()
}

// memory is the attached cache's account; false while none is.
func (m *memoryMetrics) memory() (tier.Memory, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache == nil {
		return tier.Memory{}, false
	}
	return m.cache.Memory(), true
}

// Describe sends every descriptor (a checked collector).
func (m *memoryMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range m.descs {
		ch <- d
	}
}

// Collect reads the account once.
func (m *memoryMetrics) Collect(ch chan<- prometheus.Metric) {
	mem, ok := m.memory()
	if !ok {
		return
	}
	for i, r := range memoryRows {
		ch <- prometheus.MustNewConstMetric(m.descs[i], prometheus.GaugeValue, float64(r.value(mem)))
	}
}
