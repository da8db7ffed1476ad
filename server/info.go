package server

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tiercache/tiercache/resp"
	"github.com/tiercache/tiercache/tier"
)

// infoSections are INFO's sections in print order (Redis 7.0's, then
// tiers and tenants); "all" and "everything" select every one of them,
// "default" (as INFO without arguments) all but commandstats and
// latencystats, as Redis's default leaves them out. A section asked for that is
// not here is left out, as Redis leaves out unknown ones.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu",
	"modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace", "tiers", "tenants"}

func (c *conn) cmdInfo(args [][]byte) {
	want := map[string]bool{}
	all := func(dflt bool) {
		for _, n := range infoSections {
			if !dflt || n != "commandstats" && n != "latencystats" {
				want[n] = true
			}
		}
	}
	for _, a := range args[1:] {
		switch s := strings.ToLower(string(a)); s {
		case "all", "everything":
			all(false)
		case "default":
			all(true)
		default:
			want[s] = true
		}
	}
	if len(want) == 0 {
		all(true)
	}
	var b strings.Builder
	snap := sync.OnceValue(func() *Snapshot { s := c.s.infoSnapshot(); return &s }) // counted from CONFIG RESETSTAT
	for _, sec := range infoSections {
		if !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		c.s.writeInfo(&b, sec, snap)
	}
	c.w.Verbatim("txt", b.String())
}

// writeInfo writes one section; snap is the snapshot every section of one
// INFO reads (taken on first use).
func (s *Server) writeInfo(b *strings.Builder, section string, snap func() *Snapshot) {
	kv := func(k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }
	switch section {
	case "server":
		b.WriteString("# Server\r\n")
		kv("redis_version", redisCompatVersion)
		kv("tiercache_version", s.opts.Version)
		kv("redis_mode", s.redisMode())
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
		writeStats(b, section, snap())
		kv("maxclients", s.opts.MaxConns)
		kv("blocked_clients", s.blk.waiting.Load())
	case "memory":
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		var mem tier.Memory // zero while loading
		if !s.loading.Load() {
			mem = s.cache.Memory()
		}
		rss, peak := residentBytes()
		b.WriteString("# Memory\r\n")
		kv("used_memory", m.HeapAlloc)
		kv("used_memory_human", humanBytes(m.HeapAlloc))
		kv("used_memory_rss", rss)
		kv("used_memory_rss_human", humanBytes(rss))
		kv("used_memory_peak_rss", peak)
		kv("maxmemory", mem.HotBytes+mem.WarmBytes)
		kv("maxmemory_human", humanBytes(uint64(mem.HotBytes+mem.WarmBytes)))
		kv("tier_hot_budget", mem.HotBytes)
		kv("tier_warm_arena", mem.WarmBytes)
		kv("tier_directory_bytes", mem.DirectoryBytes)
		kv("tier_expiry_index_bytes", mem.ExpiryIndexBytes)
		kv("tier_flusher_bytes", mem.FlusherBytes)
		kv("tier_sketch_bytes", mem.SketchBytes)
		kv("tier_remote_heap_bytes", mem.RemoteBytes)
		kv("tier_live_heap_bytes", mem.LiveBytes)
		kv("tier_heap_budget", mem.HeapBudget)
		kv("go_memory_limit", debug.SetMemoryLimit(-1))
		kv("big_bulk_buffer_bytes", resp.BigBufferBytes())
		kv("go_heap_objects", m.HeapObjects)
		kv("go_gc_cycles", m.NumGC)
		writeStats(b, section, snap())
	case "persistence":
		// No RDB or AOF: the cold tier is the persistence, as durability says.
		b.WriteString("# Persistence\r\n")
		writeStats(b, section, snap()) // loading
		kv("async_loading", 0)
		if snap().Server.Loading {
			s.writeLoading(b)
		}
		kv("rdb_changes_since_last_save", 0)
		kv("rdb_bgsave_in_progress", 0)
		kv("rdb_last_save_time", s.start.Unix()) // LASTSAVE's (cmd_conn.go)
		kv("rdb_last_bgsave_status", "ok")
		kv("aof_enabled", 0)
		kv("aof_rewrite_in_progress", 0)
		kv("aof_last_write_status", "ok")
		kv("tier_durability", s.opts.Durability)
		kv("tier_data_dir", s.opts.DataDir)
	case "stats":
		b.WriteString("# Stats\r\n")
		writeStats(b, section, snap())
	case "replication":
		b.WriteString("# Replication\r\n")
		kv("role", "master")
		kv("connected_slaves", 0)
		kv("master_failover_state", "no-failover")
		kv("master_repl_offset", 0)
		kv("repl_backlog_active", 0)
	case "cpu":
		user, sys := cpuTimes()
		b.WriteString("# CPU\r\n")
		kv("used_cpu_sys", fmt.Sprintf("%.6f", sys))
		kv("used_cpu_user", fmt.Sprintf("%.6f", user))
		kv("used_cpu_sys_children", "0.000000")
		kv("used_cpu_user_children", "0.000000")
	case "modules":
		b.WriteString("# Modules\r\n")
	case "latencystats":
		s.writeLatencyStats(b) // cmd_latency.go
	case "commandstats":
		s.writeCommandStats(b)
	case "errorstats":
		b.WriteString("# Errorstats\r\n")
		s.errs.writeInfo(b)
	case "keyspace":
		b.WriteString("# Keyspace\r\n")
		if n := snap().Cache.Keys; n > 0 {
			kv("db0", fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", n, snap().Cache.Expiring))
		}
	case "cluster":
		// Clients read cluster_enabled before they choose a cluster client
		// (LangChain's RedisStore, redis-py's from_url helpers).
		s.writeClusterInfo(b)
	case "tiers":
		b.WriteString("# Tiers\r\n")
		writeStats(b, section, snap())
	case "tenants":
		b.WriteString("# Tenants\r\n")
		writeTenants(b, snap())
	}
}

// writeTenants writes one line per tenant, its per-tenant rows as
// <Info>=<value> pairs: tenant_<name>:quota_bytes=...,keys=...,hits=...
// (none without tenants).
func writeTenants(b *strings.Builder, snap *Snapshot) {
	for _, t := range snap.Cache.Tenants {
		fmt.Fprintf(b, "tenant_%s:", t.Name)
		sep := ""
		for i := range statsTable {
			if r := &statsTable[i]; r.Label == TenantLabel {
				fmt.Fprintf(b, "%s%s=%s", sep, r.Info, r.value(statView{Snapshot: snap, Tenant: t}).Text)
				sep = ","
			}
		}
		b.WriteString("\r\n")
	}
}

// writeStats writes the stats table's rows of section: the per-tier rows
// tier by tier first (tier_hot_items, tier_hot_bytes, ...), then the rest
// in table order.
func writeStats(b *strings.Builder, section string, snap *Snapshot) {
	for _, l := range snap.Cache.Tiers {
		for i := range statsTable {
			if r := &statsTable[i]; r.Section == section && r.Label == TierLabel {
				fmt.Fprintf(b, "%s:%s\r\n", r.InfoField(l.Name), r.value(statView{Snapshot: snap, Level: l}).Text)
			}
		}
	}
	for i := range statsTable {
		if r := &statsTable[i]; r.Section == section && r.Label != TierLabel {
			fmt.Fprintf(b, "%s:%s\r\n", r.Info, r.value(statView{Snapshot: snap}).Text)
		}
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

// residentBytes reads the process's resident set and its peak (VmRSS and
// VmHWM in /proc/self/status, proc(5)); 0 where they cannot be read.
func residentBytes() (rss, peak uint64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			continue
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak
}
