package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// servedWhileLoading are the commands that run before the cache is open
// (S27): the connection's own, which touch no key, INFO, TIME, SHUTDOWN,
// SLOWLOG, LATENCY, MONITOR and PING. Redis
// runs the commands it flags "loading", PING not among them; here PING
// answers, so that a health check sees the server up, and WATCH and
// CONFIG do not, since they read the cache. CLUSTER (but for the
// subcommands that count keys) answers too, where Redis answers -LOADING:
// a cluster client learns the topology, then retries -LOADING.
var servedWhileLoading = []string{"ping", "echo", "time", "hello", "auth", "client", "command", "select", "quit", "info",
	"multi", "exec", "discard", "unwatch", "cluster", "readonly", "readwrite", "asking", "shutdown", "reset", "lastsave", "slowlog", "monitor", "latency"}

// LoadProgress is how far the cache's opening got, for INFO while the
// server is loading (NewLoading). The zero value is "nothing known yet".
type LoadProgress struct {
	// Method is how the cold store's index is being rebuilt: "checkpoint"
	// or "scan" ("" until known).
	Method string
	// LoadedBytes of TotalBytes are read so far.
	LoadedBytes, TotalBytes int64
	// Keys is how many keys were found so far.
	Keys int64
}

// NewLoading returns a Server without a cache yet, for a cache that takes
// long to open: once started it answers PING, INFO (loading:1 with
// progress's report) and the connection commands, and every command that
// touches data "-LOADING Redis is loading the dataset in memory", until
// Loaded hands it the cache (S27). progress may be nil.
func NewLoading(opts Options, progress func() LoadProgress) (*Server, error) {
	s, err := newServer(nil, opts)
	if err != nil {
		return nil, err
	}
	s.progress = progress
	s.loading.Store(true)
	return s, nil
}

// Loaded gives a server made by NewLoading its cache: from then on every
// command runs. It may be called once.
func (s *Server) Loaded(cache *tier.Cache) error {
	if cache == nil {
		return fmt.Errorf("%w: nil cache", ErrInvalidOptions)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loading.Load() {
		return ErrNotLoading
	}
	s.cache = cache
	cache.OnRemoval(s.tierRemoval)
	cache.HoldSweep(s.pause.on.Load) // no expiry sweep while clients are paused (S98)
	s.loading.Store(false)           // publishes s.cache to whoever loads false
	return nil
}

// Loading reports whether the server still waits for its cache (Loaded).
func (s *Server) Loading() bool { return s.loading.Load() }

// loaded reports whether the cache is there, and from the first time it
// is, lets the connection use it without asking again: a connection asks
// (one atomic load) only for its commands that touch data while the
// server is loading.
func (c *conn) loaded() bool {
	if c.s.loading.Load() {
		return false
	}
	c.ready = true
	c.lists.cache = c.s.cache
	return true
}

// writeLoading writes INFO persistence's loading progress: Redis's
// fields, then tiercache's (keys found, elapsed time, method).
func (s *Server) writeLoading(b *strings.Builder) {
	var p LoadProgress
	if s.progress != nil {
		p = s.progress()
	}
	elapsed := time.Since(s.start)
	perc, eta := 0.0, int64(1) // Redis's values while nothing is known
	if p.TotalBytes > 0 {
		perc = 100 * float64(p.LoadedBytes) / float64(p.TotalBytes)
	}
	if p.LoadedBytes > 0 {
		eta = int64(elapsed.Seconds() * float64(p.TotalBytes-p.LoadedBytes) / float64(p.LoadedBytes))
	}
	fmt.Fprintf(b, "loading_start_time:%d\r\n", s.start.Unix())
	fmt.Fprintf(b, "loading_total_bytes:%d\r\n", p.TotalBytes)
	fmt.Fprintf(b, "loading_loaded_bytes:%d\r\n", p.LoadedBytes)
	fmt.Fprintf(b, "loading_loaded_perc:%.2f\r\n", perc)
	fmt.Fprintf(b, "loading_eta_seconds:%d\r\n", eta)
	fmt.Fprintf(b, "loading_loaded_keys:%d\r\n", p.Keys)
	fmt.Fprintf(b, "loading_elapsed_seconds:%d\r\n", int64(elapsed/time.Second))
	fmt.Fprintf(b, "loading_method:%s\r\n", infoText(p.Method))
}
