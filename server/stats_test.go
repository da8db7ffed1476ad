package server

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestStatsNeverGoBack: the commands processed, keyspace hits and misses
// Stats (INFO, /metrics) reports never decrease while connections that
// ran commands close: a closing connection's counts are in the sum
// before, while and after they move from it to the server's totals.
func TestStatsNeverGoBack(t *testing.T) {
	s, path := startServer(t, nil)
	seed := dialRaw(t, path)
	seed.cmd("SET", "k", "v")
	seed.reply()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				c := dialRaw(t, path)
				c.send(pipeline([]string{"GET", "k"}, []string{"GET", "absent"}, []string{"PING"}))
				for range 3 {
					c.reply()
				}
				c.nc.Close()
			}
		}()
	}
	go func() { wg.Wait(); stop.Store(true) }()
	var last, bad Stats
	for !stop.Load() {
		st := s.Stats()
		if st.CommandsProcessed < last.CommandsProcessed || st.KeyspaceHits < last.KeyspaceHits ||
			st.KeyspaceMisses < last.KeyspaceMisses {
			bad = st
			break
		}
		last = st
	}
	wg.Wait()
	if bad != (Stats{}) {
		t.Fatalf("commands, hits, misses %d %d %d, before %d %d %d",
			bad.CommandsProcessed, bad.KeyspaceHits, bad.KeyspaceMisses,
			last.CommandsProcessed, last.KeyspaceHits, last.KeyspaceMisses)
	}
}
