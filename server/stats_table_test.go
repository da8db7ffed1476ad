package server

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/tier"
)

// notExported is every leaf field of Snapshot (tier.Stats, its
// flusher.Stats and tier.TierLevel, and Stats) that no row of statsTable
// reads, with the reason. TestStatsTableCoversStats fails for a field in
// neither, so a counter added to tier.Stats is exported or explained here.
var notExported = map[string]string{
	"Cache.Tenants.Cold.Name":         "the tenant's name again: its label, tenant_<name> in INFO",
	"Cache.Remote.Store.ClientBytes":  "an estimate counted into tier_remote_heap_bytes (INFO memory, memory_remote_heap_bytes)",
	"Cache.Misses":                    "the same number as the last tier's misses (tier_cold_misses, tiercache_tier_misses_total{tier=\"cold\"})",
	"Cache.DRAM.HotUsed":              "bytes appended to hot's segments in use, live and dead: a probe of the log's cleaning (tier_bytes{tier=\"hot\"} is what is live)",
	"Cache.DRAM.WarmUsed":             "the same for warm",
	"Cache.DRAM.HotSegments":          "the hot log's segment count: configuration, not a signal",
	"Cache.DRAM.WarmSegments":         "the warm log's segment count: configuration, not a signal",
	"Cache.Phantoms":                  "a race probe (a read retried and found its version nowhere) for tier's concurrency tests, not an operational signal",
	"Cache.Adopted":                   "never exported so far (tier's tests read it): keys found in an earlier run's cold store; a candidate row",
	"Cache.ColdDeletes":               "never exported so far (tier's tests read it): cold deletes queued for overwritten keys; a candidate row",
	"Cache.Tombstones":                "never exported so far: deletes that waited for a cold delete; a candidate row",
	"Cache.Expired":                   "the sweep's removals, which the server counts as the cache tells it of them (tierRemoval) for expired_keys, which CONFIG RESETSTAT resets",
	"Cache.Expiring":                  "INFO keyspace's expires (its db0 line, written by hand as Redis writes it); a candidate gauge",
	"Cache.InTransit":                 "an instant count of copies between tiers, nearly always 0 when sampled; bench reads it",
	"Cache.MGetSubmissions":           "a probe of MGet's batching for tests and bench, not an operational signal",
	"Cache.Flusher.InFlight":          "never exported so far: batches at the device, bounded by flusher.in_flight; a candidate row",
	"Cache.Flusher.Enqueued":          "never exported so far: the sum of what the exported flusher_* rows and flusher_queue count, plus Superseded",
	"Cache.Flusher.Superseded":        "items skipped because a newer copy existed: a flusher-internal saving, read by its tests",
	"Cache.Flusher.DeleteCalls":       "a probe of delete batching for flusher's and tier's tests, not an operational signal",
	"Cache.Remote.Store.LatencyCount": "exported with the round-trip latency histogram, tiercache_remote_latency_seconds (cmd/tiercache)",
	"Cache.Remote.Store.LatencySum":   "exported with the round-trip latency histogram, tiercache_remote_latency_seconds (cmd/tiercache)",
}

// statSamples renders every row on snap: key row index and label, value
// the sample.
func statSamples(snap *Snapshot) map[string]StatValue {
	out := map[string]StatValue{}
	for i := range statsTable {
		statsTable[i].Each(snap, func(label string, v StatValue) {
			out[fmt.Sprintf("%d/%s", i, label)] = v
		})
	}
	return out
}

// snapshotLeaves calls f with the path ("Cache.Flusher.Drops",
// "Cache.Tiers.Hits") and value of every leaf field under v.
func snapshotLeaves(path string, v reflect.Value, f func(path string, v reflect.Value)) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			p := v.Type().Field(i).Name
			if path != "" {
				p = path + "." + p
			}
			snapshotLeaves(p, v.Field(i), f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			snapshotLeaves(path, v.Index(i), f)
		}
	default:
		f(path, v)
	}
}

// setLeaf gives v a value other than its zero one.
func setLeaf(v reflect.Value) error {
	if !v.CanSet() {
		return errors.New("unexported field")
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("x")
	case reflect.Interface:
		e := reflect.ValueOf(errors.New("x"))
		if !e.Type().AssignableTo(v.Type()) {
			return fmt.Errorf("interface %s: teach setLeaf a value for it", v.Type())
		}
		v.Set(e)
	default:
		return fmt.Errorf("kind %s: teach setLeaf a value for it", v.Kind())
	}
	return nil
}

// TestStatsTableCoversStats (S13): every leaf field of Snapshot changes
// some row's sample when set (so a row reads it), or is in notExported,
// and never both.
func TestStatsTableCoversStats(t *testing.T) {
	fresh := func() *Snapshot {
		return &Snapshot{Cache: tier.Stats{Tiers: []tier.TierLevel{{Name: "hot"}}, Tenants: []tier.TenantStats{{Name: "a"}}}}
	}
	base := statSamples(fresh())
	var paths []string
	snapshotLeaves("", reflect.ValueOf(fresh()).Elem(), func(p string, _ reflect.Value) { paths = append(paths, p) })
	for _, p := range paths {
		snap := fresh()
		snapshotLeaves("", reflect.ValueOf(snap).Elem(), func(q string, v reflect.Value) {
			if q == p {
				if err := setLeaf(v); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
		})
		read := !maps.Equal(base, statSamples(snap))
		why, listed := notExported[p]
		switch {
		case read && listed:
			t.Errorf("%s is read by a row of statsTable and listed in notExported (%s): drop it from the list", p, why)
		case !read && !listed:
			t.Errorf("%s is in no row of statsTable (server/stats_table.go): add one, or say in notExported why not", p)
		}
	}
	for p := range notExported {
		if !slices.Contains(paths, p) {
			t.Errorf("notExported lists %s, which Snapshot has no more", p)
		}
	}
}

// legacyNames are the rows whose metric is not named after the INFO field
// (TestStatsTableNames): INFO fields Redis defines, which clients read,
// and names both sides had before the table; INFO field → metric.
var legacyNames = map[string]string{
	"total_connections_received":                "connections_total",
	"total_commands_processed":                  "commands_total",
	"total_error_replies_protocol":              "protocol_errors_total",
	"total_net_input_bytes":                     "net_input_bytes_total",
	"total_net_output_bytes":                    "net_output_bytes_total",
	"total_error_replies":                       "error_replies_total",
	"total_reads_processed":                     "reads_processed_total",
	"total_writes_processed":                    "writes_processed_total",
	"client_output_buffer_limit_disconnections": "output_limit_disconnections_total",
	"flusher_queue":                             "flusher_queue_items",
	"warm_placement":                            "warm_placement_ratio",
	"cold_bytes_read":                           "device_bytes_read_total",
	"cold_bytes_written":                        "device_bytes_written_total",
}

// TestStatsTableNames (S13): the table's names are unique and follow the
// naming rule: metric = [tier_]<INFO field>[_total for a counter, _info
// for a text], but for legacyNames.
func TestStatsTableNames(t *testing.T) {
	infos, metrics := map[string]bool{}, map[string]bool{}
	for _, r := range statsTable {
		if !slices.Contains([]string{"persistence", "memory", "clients", "stats", "tiers", "tenants"}, r.Section) {
			t.Errorf("%s: section %q is not one INFO prints from the table", r.Info, r.Section)
		}
		if r.Help == "" || r.value == nil {
			t.Errorf("%s: no help or no accessor", r.Info)
		}
		field := r.Info
		if r.Label == TenantLabel {
			field = "tenant_<name>:" + r.Info // a key within a tenant's line
		}
		if infos[field] {
			t.Errorf("%s: INFO field twice", r.Info)
		}
		infos[field] = true
		if r.Metric == "" {
			if r.Kind != StatText || !strings.Contains(r.Help, "INFO only") {
				t.Errorf("%s: only a text row may be INFO only, and its help says so (\"INFO only: why\")", r.Info)
			}
			continue
		}
		if metrics[r.Metric] {
			t.Errorf("%s: metric %s twice", r.Info, r.Metric)
		}
		metrics[r.Metric] = true
		want := r.Info
		if base, ok := strings.CutSuffix(want, "_ms"); ok {
			want = base + "_seconds" // a duration: milliseconds in INFO, seconds in /metrics (millis)
		}
		switch r.Label {
		case TierLabel:
			want = "tier_" + want
		case TenantLabel:
			want = "tenant_" + want
		}
		if (r.Section == "tenants") != (r.Label == TenantLabel) {
			t.Errorf("%s: the tenants section holds the per-tenant rows, and only them", r.Info)
		}
		switch r.Kind {
		case StatCounter:
			want += "_total"
		case StatText:
			want += "_info"
			if r.Label == "" || r.Label == TierLabel || r.Label == TenantLabel {
				t.Errorf("%s: a text row exported needs a label of its own for the text", r.Info)
			}
		}
		if r.Kind != StatText && r.Label != "" && r.Label != TierLabel && r.Label != TenantLabel {
			t.Errorf("%s: label %q on a number: only %q and %q are labels of numbers", r.Info, r.Label, TierLabel, TenantLabel)
		}
		if legacy, ok := legacyNames[r.Info]; ok {
			want = legacy
		}
		if r.Metric != want {
			t.Errorf("%s: metric %s, want %s", r.Info, r.Metric, want)
		}
	}
	for info := range legacyNames {
		if !infos[info] {
			t.Errorf("legacyNames lists %s, which the table has no more", info)
		}
	}
}

// TestInfoHasEveryStat (S13): the clients, stats and tiers sections of
// INFO are exactly the table's rows (per-tier rows once per tier), plus
// clients' maxclients and blocked_clients, which are settings; the
// persistence and memory sections have the table's rows (loading,
// number_of_cached_scripts) besides their fixed fields.
func TestInfoHasEveryStat(t *testing.T) {
	s, path := startServer(t, nil)
	c := dialRaw(t, path)
	c.cmd("SET", "k", "v")
	c.reply()
	c.cmd("INFO", "everything")
	got := map[string][]string{}
	sec := ""
	for _, line := range strings.Split(c.reply(), "\r\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			sec = strings.ToLower(h)
		} else if k, _, ok := strings.Cut(line, ":"); ok {
			got[sec] = append(got[sec], k)
		}
	}
	want := map[string][]string{"clients": {"maxclients", "blocked_clients"},
		"persistence": {"async_loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_save_time", "rdb_last_bgsave_status",
			"aof_enabled", "aof_rewrite_in_progress", "aof_last_write_status", "tier_durability", "tier_data_dir"},
		"memory": {"used_memory", "used_memory_human", "used_memory_rss", "used_memory_rss_human", "used_memory_peak_rss",
			"maxmemory", "maxmemory_human", "tier_hot_budget", "tier_warm_arena", "tier_directory_bytes", "tier_expiry_index_bytes",
			"tier_flusher_bytes", "tier_sketch_bytes", "tier_remote_heap_bytes", "tier_live_heap_bytes", "tier_heap_budget",
			"go_memory_limit", "big_bulk_buffer_bytes", "go_heap_objects", "go_gc_cycles"}}
	snap := s.Snapshot()
	for i := range statsTable {
		r := &statsTable[i]
		r.Each(&snap, func(label string, _ StatValue) {
			want[r.Section] = append(want[r.Section], r.InfoField(label))
		})
	}
	for sec, fields := range want {
		slices.Sort(fields)
		fields = slices.Compact(fields) // a tenant's rows share its line
		g := slices.Sorted(slices.Values(got[sec]))
		if !slices.Equal(g, fields) {
			t.Errorf("INFO %s has fields\n%q\nthe table makes\n%q", sec, g, fields)
		}
	}
}
