package server

import (
	"sync"
	"time"
)

// INFO's instantaneous_ops_per_sec, instantaneous_input_kbps and
// instantaneous_output_kbps, as redis-server 7.0 makes them (server.c):
// serverCron samples each cumulative reading every 100 ms
// (run_with_period(100)), keeping the rate since the previous sample in
// whole units per second (trackInstantaneousMetric), the last
// STATS_METRIC_SAMPLES (16, server.h) of them; the metric is their mean in
// integer arithmetic (getInstantaneousMetric), the byte rates then divided
// by 1024 as a C float. A metric is 0 until samples came, and CONFIG
// RESETSTAT zeroes them (resetServerStats).
const (
	instEvery   = 100 * time.Millisecond
	instSamples = 16
)

// The readings sampled: commands, bytes read, bytes written.
const (
	instOps = iota
	instIn
	instOut
	instCount
)

// instMetrics samples the server's counters (instLoop) from New to Close.
type instMetrics struct {
	mu      sync.Mutex
	last    time.Time         // when the last sample was taken
	lastN   [instCount]uint64 // the readings then
	samples [instCount][instSamples]int64
	idx     int // the next sample's slot
	stop    chan struct{}
	done    chan struct{}
}

// init starts sampling s.
func (m *instMetrics) init(s *Server) {
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	m.last = time.Now()
	go m.loop(s)
}

func (m *instMetrics) loop(s *Server) {
	defer close(m.done)
	t := time.NewTicker(instEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.sample(time.Now(), instReadings(s.ioTotals()))
	}
}

// close stops the sampling.
func (m *instMetrics) close() {
	close(m.stop)
	<-m.done
}

// instReadings are t's readings that instMetrics samples.
func instReadings(t ioTotals) [instCount]uint64 {
	return [instCount]uint64{instOps: t.commands, instIn: t.inBytes, instOut: t.outBytes}
}

// sample takes one sample of readings r at now: each reading's rate per
// second since the last sample (trackInstantaneousMetric). A reading
// behind the last one (taken before a reset that came first) counts 0.
func (m *instMetrics) sample(now time.Time, r [instCount]uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := now.Sub(m.last).Milliseconds()
	for i := range r {
		var perSec int64
		if ms > 0 && r[i] > m.lastN[i] {
			perSec = int64(r[i]-m.lastN[i]) * 1000 / ms
		}
		m.samples[i][m.idx] = perSec
	}
	m.idx = (m.idx + 1) % instSamples
	m.last, m.lastN = now, r
}

// reset forgets every sample, the readings now being r (CONFIG RESETSTAT).
func (m *instMetrics) reset(now time.Time, r [instCount]uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples = [instCount][instSamples]int64{}
	m.idx = 0
	m.last, m.lastN = now, r
}

// rates are the metrics: commands per second, kilobytes per second read
// and written.
func (m *instMetrics) rates() (ops int64, inKbps, outKbps float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mean := func(i int) int64 {
		var sum int64
		for _, v := range m.samples[i] {
			sum += v
		}
		return sum / instSamples
	}
	kbps := func(i int) float64 { return float64(float32(mean(i)) / 1024) } // (float)getInstantaneousMetric(...)/1024
	return mean(instOps), kbps(instIn), kbps(instOut)
}
