package remote

import (
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/backend"
)

// latencyBounds are the upper bounds of the round-trip histogram's buckets.
var latencyBounds = []time.Duration{100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, time.Second}

// histogram counts round trips by latency, lock-free.
type histogram struct {
	counts []atomic.Uint64 // per bucket, and one past the last bound
	n      atomic.Uint64
	sum    atomic.Int64
}

func (h *histogram) init() { h.counts = make([]atomic.Uint64, len(latencyBounds)+1) }

func (h *histogram) observe(d time.Duration) {
	i := 0
	for i < len(latencyBounds) && d > latencyBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.n.Add(1)
	h.sum.Add(int64(d))
}

// fill writes the cumulative counts into rs.
func (h *histogram) fill(rs *backend.RemoteStats) {
	rs.LatencyBounds = latencyBounds
	rs.LatencyCounts = make([]uint64, len(latencyBounds))
	var cum uint64
	for i := range latencyBounds {
		cum += h.counts[i].Load()
		rs.LatencyCounts[i] = cum
	}
	rs.LatencyCount = h.n.Load()
	rs.LatencySum = time.Duration(h.sum.Load())
}
