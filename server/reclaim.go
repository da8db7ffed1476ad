package server

import (
	"runtime/debug"
	"time"

	"github.com/tiercache/tiercache/resp"
)

// Returning memory after one-off bursts (S17). Go's background scavenger
// returns free heap pages only down to the heap goal set at the last
// collection, and an idle server allocates nothing, so no collection comes:
// the pages a million-argument command or two thousand closed connections
// used would stay resident indefinitely. So once reclaimAfter bytes of such
// buffers were dropped and a tick passed without more, the reclaimer
// collects and returns the free pages
// (debug.FreeOSMemory), at most once per reclaimEvery: a full collection
// costs CPU in proportion to the live heap, which must not be paid often.
const (
	reclaimAfter = 16 << 20
	reclaimEvery = 2 * time.Second
	reclaimTick  = time.Second
	// closedConnBytes is what a closed connection is taken to leave free:
	// its goroutine's stack, its structs, a grown stack's pages.
	closedConnBytes = 16 << 10
	// bigIdle: a free off-heap buffer of a big bulk (resp R6) unused this
	// long is unmapped, at the next tick.
	bigIdle = 10 * time.Second
)

// reclaimLoop runs from New until Close.
func (s *Server) reclaimLoop() {
	defer close(s.reclaimDone)
	t := time.NewTicker(reclaimTick)
	defer t.Stop()
	var last time.Time
	var seen int64
	for {
		select {
		case <-s.reclaimStop:
			return
		case <-t.C:
		}
		resp.TrimBigBuffers(bigIdle)
		s.migr.closeIdle(time.Now()) // serverCron's migrateCloseTimedoutSockets, once a second too
		// Wait for the burst to end (nothing dropped for a tick), so one
		// reclaim returns all of it.
		d := s.dropped.Load()
		quiet := d == seen
		seen = d
		if d < reclaimAfter || !quiet || time.Since(last) < reclaimEvery {
			continue
		}
		s.dropped.Add(-d)
		seen = 0
		debug.FreeOSMemory()
		s.stats.reclaims.Add(1)
		last = time.Now()
	}
}
