package server

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// infoSections are INFO's sections in print order; "default" and "all"
// select every one of them.
var infoSections = []string{"server", "clients", "memory", "stats", "keyspace", "tiers"}

func (c *conn) cmdInfo(args [][]byte) {
	want := map[string]bool{}
	for _, a := range args[1:] {
		s := strings.ToLower(string(a))
		if s == "all" || s == "default" || s == "everything" {
			for _, n := range infoSections {
				want[n] = true
			}
			continue
		}
		want[s] = true
	}
	if len(want) == 0 {
		for _, n := range infoSections {
			want[n] = true
		}
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		c.s.writeInfo(&b, sec)
	}
	c.w.Verbatim("txt", b.String())
}

func (s *Server) writeInfo(b *strings.Builder, section string) {
	kv := func(k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }
	switch section {
	case "server":
		b.WriteString("# Server\r\n")
		kv("redis_version", redisCompatVersion)
		kv("tiercache_version", s.opts.Version)
		kv("redis_mode", "standalone")
		kv("os", runtime.GOOS+" "+runtime.GOARCH)
		kv("arch_bits", 64)
		kv("go_version", runtime.Version())
		kv("process_id", os.Getpid())
		up := time.Since(s.start)
		kv("uptime_in_seconds", int64(up/time.Second))
		kv("uptime_in_days", int64(up/(24*time.Hour)))
		kv("unix_socket", s.opts.UnixSocket)
		kv("tcp_listener", onOff(s.opts.TCPAddr != ""))
	case "clients":
		b.WriteString("# Clients\r\n")
		kv("connected_clients", s.stats.connsOpen.Load())
		kv("maxclients", s.opts.MaxConns)
		kv("blocked_clients", 0)
	case "memory":
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.WriteString("# Memory\r\n")
		kv("used_memory", m.HeapAlloc)
		kv("used_memory_human", humanBytes(m.HeapAlloc))
		kv("used_memory_rss", m.Sys)
		kv("go_heap_objects", m.HeapObjects)
		kv("go_gc_cycles", m.NumGC)
	case "stats":
		st := s.Stats()
		b.WriteString("# Stats\r\n")
		kv("total_connections_received", st.TotalConnections)
		kv("total_commands_processed", st.CommandsProcessed)
		kv("rejected_connections", st.RejectedConns)
		kv("keyspace_hits", st.KeyspaceHits)
		kv("keyspace_misses", st.KeyspaceMisses)
		kv("total_error_replies_protocol", st.ProtocolErrors)
		kv("client_output_buffer_limit_disconnections", st.OutputLimitCloses)
		kv("cold_get_batches", st.ColdGetBatches)
		kv("cold_get_batched", st.ColdGetBatched)
	case "keyspace":
		b.WriteString("# Keyspace\r\n")
		if n := s.cache.TierStats().Keys; n > 0 {
			kv("db0", fmt.Sprintf("keys=%d,expires=0,avg_ttl=0", n))
		}
	case "tiers":
		t := s.cache.TierStats()
		b.WriteString("# Tiers\r\n")
		for _, l := range t.Tiers {
			p := "tier_" + l.Name + "_"
			kv(p+"items", l.Items)
			kv(p+"bytes", l.Bytes)
			kv(p+"hits", l.Hits)
			kv(p+"misses", l.Misses)
			kv(p+"evictions", l.Evictions)
		}
		kv("flusher_queue", t.FlusherQueue)
		kv("flusher_bytes", t.FlusherBytes)
		kv("flusher_batches", t.FlusherBatches)
		kv("flusher_drops", t.FlusherDrops)
		kv("flusher_errors", t.FlusherErrors)
		kv("lost", t.Lost)
		kv("directory_forgotten", t.Forgotten)
		kv("warm_numa_node", t.WarmNode)
		kv("warm_placement", fmt.Sprintf("%.4f", t.WarmPlacement))
		kv("cold_backend", t.ColdBackend)
		kv("cold_free_bytes", t.ColdFreeBytes)
		kv("cold_bytes_read", t.ColdBytesRead)
		kv("cold_bytes_written", t.ColdBytesWritten)
		kv("cold_stalled_io", t.ColdStalledIO)
		kv("cold_oldest_io_ms", t.ColdOldestIO.Milliseconds())
		kv("cold_errors", t.ColdErrors)
		kv("cold_writable", boolInt(t.ColdWritable))
		kv("cold_write_error", infoText(t.ColdWriteError))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// infoText makes s one INFO value: no CR or LF.
func infoText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	f := float64(n)
	for _, u := range []string{"K", "M", "G", "T"} {
		f /= unit
		if f < unit {
			return fmt.Sprintf("%.2f%s", f, u)
		}
	}
	return fmt.Sprintf("%.2fP", f/unit)
}
