package main

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/procfs"

	"github.com/tiercache/tiercache/server"
)

// statusPageHTML is the status page: one file, its styles and script
// inline, no external asset (C18).
//
//go:embed statuspage.html
var statusPageHTML []byte

// statusPageCSP lets the page run its inline script and style and fetch
// from its own origin, and nothing else.
const statusPageCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:"

// statusDoc is GET /status.json: the stats table's rows (server's
// statsTable, the rows INFO prints) and INFO memory's, each under its INFO
// name with INFO's value, so the page shows what INFO shows.
type statusDoc struct {
	Version       string         `json:"version"`
	TimeMillis    int64          `json:"time_ms"`
	UptimeSeconds int64          `json:"uptime_seconds"`
	Loading       bool           `json:"loading"`
	Fields        map[string]any `json:"fields"`  // rows of neither tier nor tenant: INFO field → value
	Tiers         []statusGroup  `json:"tiers"`   // per-tier rows: tier_<name>_<key> in INFO
	Tenants       []statusGroup  `json:"tenants"` // per-tenant rows: tenant_<name>:<key>=... in INFO
	Memory        map[string]any `json:"memory"`  // INFO memory's fields (none while loading but used_memory_rss)
	// Counters names the fields (and the tiers' and tenants' keys) that
	// only grow, so the page can show their rate.
	Counters []string `json:"counters"`
}

// statusGroup is one tier's or one tenant's values: "name" and the rows'
// INFO keys.
type statusGroup map[string]any

// handleStatus serves the status page at GET / and its data at GET
// /status.json on mux. Other paths stay mux's (404).
func (m *metrics) handleStatus(mux *http.ServeMux, version string) {
	started := time.Now()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", statusPageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		w.Write(statusPageHTML)
	})
	mux.HandleFunc("GET /status.json", func(w http.ResponseWriter, r *http.Request) {
		doc := m.status(version, started)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		json.NewEncoder(w).Encode(doc)
	})
}

// status takes one snapshot of the attached server and cache.
func (m *metrics) status(version string, started time.Time) statusDoc {
	now := time.Now()
	doc := statusDoc{Version: version, TimeMillis: now.UnixMilli(), UptimeSeconds: int64(now.Sub(started).Seconds()),
		Fields: map[string]any{}, Tiers: []statusGroup{}, Tenants: []statusGroup{}, Memory: map[string]any{}}
	if p, err := procfs.Self(); err == nil {
		if st, err := p.NewStatus(); err == nil {
			doc.Memory["used_memory_rss"] = st.VmRSS
		}
	}
	m.mu.Lock()
	srv := m.srv
	var snap server.Snapshot
	if srv != nil {
		snap = srv.Snapshot()
	}
	m.mu.Unlock()
	if srv == nil {
		doc.Loading = true
		return doc
	}
	doc.Loading = snap.Server.Loading
	tiers := map[string]statusGroup{}
	tenants := map[string]statusGroup{}
	group := func(all *[]statusGroup, byName map[string]statusGroup, name string) statusGroup {
		g, ok := byName[name]
		if !ok {
			g = statusGroup{"name": name}
			byName[name] = g
			*all = append(*all, g)
		}
		return g
	}
	for _, r := range server.StatTable() {
		if r.Kind == server.StatCounter && !slices.Contains(doc.Counters, r.Info) {
			doc.Counters = append(doc.Counters, r.Info)
		}
		r.Each(&snap, func(label string, v server.StatValue) {
			val := infoValue(r.Kind, v)
			switch r.Label {
			case server.TierLabel:
				group(&doc.Tiers, tiers, label)[r.Info] = val
			case server.TenantLabel:
				group(&doc.Tenants, tenants, label)[r.Info] = val
			default:
				doc.Fields[r.Info] = val
			}
		})
	}
	if mem, ok := m.mem.memory(); ok {
		for _, r := range memoryRows {
			doc.Memory[r.info] = r.value(mem)
		}
		doc.Memory["maxmemory"] = mem.HotBytes + mem.WarmBytes
	}
	return doc
}

// infoValue is v as INFO prints it: a number (INFO's digits, so a
// duration in milliseconds and a ratio with four decimals) or a text.
func infoValue(kind server.StatKind, v server.StatValue) any {
	if kind != server.StatText {
		if _, err := strconv.ParseFloat(v.Text, 64); err == nil {
			return json.Number(v.Text)
		}
	}
	return v.Text
}
