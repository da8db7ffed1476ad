package main

import (
	"os"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/tier"
)

// memLimitEvery is how often the Go memory limit follows the directory's
// growth: a bulk load adds some 100k keys a second, and a limit a second
// behind them held the heap at its goal, collecting without end.
const memLimitEvery = 100 * time.Millisecond

// memLimiter sets the process's Go memory limit (runtime/debug
// SetMemoryLimit, what GOMEMLIMIT sets) to the sum of the limits of the
// caches running in the process (one in the sidecar; tests run several):
// a fixed size, or a cache's heap budget and live structures
// (tier.Memory.GoLimit) re-read every memLimitEvery
// (server.go_memory_limit auto), so that the collector keeps the heap near
// what the tiers hold instead of letting it grow to twice that (GOGC=100).
// With auto shares the runtime's own memory beside the heap's objects
// (overhead: stacks, the collector's metadata, profiling buckets, the
// heap's fragmentation) is added, re-read
// with them: Go's limit counts it, and the heap budget is what the heap's
// objects may take, so that the collector keeps the budget's slack as its
// room instead of collecting without end once the runtime's memory ate it.
// The limit in force before the first cache is put back after the last.
type memLimiter struct {
	mu       sync.Mutex
	caches   map[*tier.Cache]memLimit
	prev     int64 // the limit before the first add
	overhead int64 // runtimeOverhead when the limit was last set (auto shares only)
	floor    int64 // liveFloor when the limit was last set (auto shares only)
	stop     chan struct{}
	stopped  chan struct{}
}

// memLimit is one cache's share: fixed bytes, or its GoLimit (auto).
type memLimit struct {
	auto  bool
	bytes int64
}

var procMemLimit = &memLimiter{caches: map[*tier.Cache]memLimit{}}

// add counts c's limit in (mode: built.memLimit) and logs what it set. A
// GOMEMLIMIT in the environment wins over auto.
func (l *memLimiter) add(c *tier.Cache, mode int64, log *zap.Logger) {
	switch {
	case mode == 0:
		log.Info("memory: server.go_memory_limit is off; Go's memory limit is left as it is")
		return
	case mode < 0 && os.Getenv("GOMEMLIMIT") != "":
		log.Info("memory: GOMEMLIMIT is set in the environment; the Go memory limit is left as it says",
			zap.String("GOMEMLIMIT", os.Getenv("GOMEMLIMIT")))
		return
	}
	m := c.Memory()
	share := memLimit{auto: mode < 0, bytes: mode}
	if share.auto {
		share.bytes = m.GoLimit()
	}
	l.mu.Lock()
	if len(l.caches) == 0 {
		l.prev = debug.SetMemoryLimit(-1)
	}
	l.caches[c] = share
	limit := l.applyLocked()
	if share.auto && l.stop == nil {
		l.stop, l.stopped = make(chan struct{}), make(chan struct{})
		go l.follow(l.stop, l.stopped)
	}
	l.mu.Unlock()
	log.Info("memory: Go memory limit set", zap.Bool("from_budget", share.auto),
		zap.Int64("limit_bytes", limit), zap.Int64("hot_bytes", m.HotBytes),
		zap.Int64("directory_bytes", m.DirectoryBytes), zap.Int64("flusher_bytes", m.FlusherBytes), zap.Int64("sketch_bytes", m.SketchBytes),
		zap.Int64("warm_bytes_off_heap", m.WarmBytes), zap.Int("directory_bytes_per_key", tier.DirEntryBytes))
}

// remove stops counting c; after the last cache the previous limit is back.
func (l *memLimiter) remove(c *tier.Cache) {
	l.mu.Lock()
	if _, ok := l.caches[c]; !ok {
		l.mu.Unlock()
		return
	}
	delete(l.caches, c)
	var stop, stopped chan struct{}
	if len(l.caches) == 0 {
		stop, stopped = l.stop, l.stopped
		l.stop, l.stopped = nil, nil
		debug.SetMemoryLimit(l.prev)
	} else {
		l.applyLocked()
	}
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// applyLocked sets the limit to the sum of the shares, and the runtime's
// overhead when a share is auto; with an auto share, never below
// liveFloor.
func (l *memLimiter) applyLocked() int64 {
	var sum int64
	l.overhead, l.floor = 0, 0
	for _, s := range l.caches {
		sum += s.bytes
		if s.auto && l.overhead == 0 {
			l.overhead, l.floor = runtimeOverhead(), liveFloor()
		}
	}
	sum = max(sum, l.floor) + l.overhead
	debug.SetMemoryLimit(sum)
	return sum
}

// liveRoom is the share of the live heap the collector is always given
// as room: a quarter, GOGC 25.
const liveRoom = 4

// liveFloor is the least an auto limit leaves the heap's objects: the
// live heap after the last collection (/gc/heap/live) and a liveRoom-th
// of it. What the shares do not count (a remote client's buffers,
// scripts, the connections' state) could otherwise bring the limit under
// the live heap, and the collector would run without end, idle or not:
// 10-25 collections a second were seen on a sidecar with a remote tier
// once a load had passed.
func liveFloor() int64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	live := int64(s[0].Value.Uint64())
	return live + live/liveRoom
}

// overheadClasses are the runtime/metrics memory classes Go's memory
// limit counts beside the heap's objects: goroutine stacks, the runtime's
// metadata, profiling buckets and the rest of its own memory, and the
// heap's fragmentation (heap/unused: the free room of spans that hold
// objects; directory entries of keys forgotten in another order than
// made leave 5-7 MB of it at 16 MiB of DRAM in a bulk load, which the
// collector cannot give back and which took the budget's slack).
var overheadClasses = []string{
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/mcache/free:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mspan/free:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/profiling/buckets:bytes",
	"/memory/classes/other:bytes",
}

// runtimeOverhead is the memory of overheadClasses now.
func runtimeOverhead() int64 {
	samples := make([]rtmetrics.Sample, len(overheadClasses))
	for i, name := range overheadClasses {
		samples[i].Name = name
	}
	rtmetrics.Read(samples)
	var n int64
	for _, s := range samples {
		if s.Value.Kind() == rtmetrics.KindUint64 {
			n += int64(s.Value.Uint64())
		}
	}
	return n
}

// follow re-reads the auto shares each memLimitEvery: the directory grows
// with the keys.
func (l *memLimiter) follow(stop, stopped chan struct{}) {
	defer close(stopped)
	t := time.NewTicker(memLimitEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !l.refresh(stop) {
			return
		}
	}
}

// refresh re-reads the auto shares and sets the limit, unless the
// follower that stop belongs to was stopped meanwhile (remove clears
// l.stop under the lock, before it closes stop): the last cache's remove
// put the previous limit back, which a refresh after it would overwrite
// with a sum of no shares, 0.
func (l *memLimiter) refresh(stop chan struct{}) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != stop {
		return false
	}
	for c, s := range l.caches {
		if s.auto {
			s.bytes = c.Memory().GoLimit()
			l.caches[c] = s
		}
	}
	l.applyLocked()
	return true
}
