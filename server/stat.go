package server

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// Snapshot is the cache's and the server's counters at one moment: what
// the stats table (statsTable) reads, for INFO and for /metrics alike.
type Snapshot struct {
	Cache  tier.Stats
	Server Stats
}

// Snapshot reads the cache's and the server's counters; while the server
// is loading, the cache's are zero (no tiers).
func (s *Server) Snapshot() Snapshot {
	if s.loading.Load() {
		return Snapshot{Server: s.Stats()}
	}
	return Snapshot{Cache: s.cache.Stats(), Server: s.Stats()}
}

// StatKind is how /metrics exports a Stat.
type StatKind uint8

const (
	// StatCounter only grows (until a restart); its metric name ends _total.
	StatCounter StatKind = iota
	// StatGauge goes up and down.
	StatGauge
	// StatText is a string. INFO prints it; a text row with a Metric is
	// exported Prometheus's info-style: a gauge of 1 whose Label holds the
	// text (its name ends _info).
	StatText
)

// TierLabel is the Label of a per-tier Stat: it has one value per tier,
// labelled tier="hot|warm|cold" in /metrics and named
// tier_<tier>_<Info> in INFO.
const TierLabel = "tier"

// TenantLabel is the Label of a per-tenant Stat: it has one value per
// tenant (tier.Stats.Tenants; none without tenants), labelled
// tenant="<name>" in /metrics; INFO's tenants section prints one line per
// tenant, tenant_<name>:<Info>=<value>,... as Redis prints a keyspace's
// db0:keys=...,expires=... (writeTenants).
const TenantLabel = "tenant"

// Stat is one row of the stats table: one number (or text) that INFO
// prints and /metrics exports under the names the row gives it.
type Stat struct {
	Section string   // INFO section: "persistence", "clients", "stats", "tiers" or "tenants"
	Info    string   // INFO field (per-tier rows: tier_<tier>_<Info>; per-tenant rows: <Info>= in the line tenant_<tenant>)
	Metric  string   // Prometheus name without the tiercache_ prefix; "" = INFO only (Help says why)
	Kind    StatKind // counter, gauge or text
	Label   string   // TierLabel, TenantLabel, a StatText row's label, or ""
	Help    string   // the metric's help text
	value   func(statView) StatValue
}

// StatValue is one sample of a Stat: Number for /metrics, Text for INFO.
type StatValue struct {
	Number float64
	Text   string
}

// statView is what a row's accessor reads: the snapshot and, for a
// per-tier row, the tier, for a per-tenant row, the tenant.
type statView struct {
	*Snapshot
	Level  tier.TierLevel
	Tenant tier.TenantStats
}

// StatTable returns the stats table (a copy), in INFO's print order.
func StatTable() []Stat { return slices.Clone(statsTable) }

// Each calls f with each sample of r in snap: once, or once per tier (in
// snap's order) for a per-tier row, once per tenant for a per-tenant row.
// label is the value of r.Label: the tier's or the tenant's name, a text
// row's text, or "".
func (r *Stat) Each(snap *Snapshot, f func(label string, v StatValue)) {
	if r.Label == TenantLabel {
		for _, t := range snap.Cache.Tenants {
			f(t.Name, r.value(statView{Snapshot: snap, Tenant: t}))
		}
		return
	}
	if r.Label != TierLabel {
		v := r.value(statView{Snapshot: snap})
		if r.Kind == StatText {
			f(v.Text, v)
		} else {
			f("", v)
		}
		return
	}
	for _, l := range snap.Cache.Tiers {
		f(l.Name, r.value(statView{Snapshot: snap, Level: l}))
	}
}

// InfoField is r's INFO field name; label names the tier of a per-tier
// row, the tenant of a per-tenant row (whose field is the tenant's line,
// shared by every per-tenant row).
func (r *Stat) InfoField(label string) string {
	switch r.Label {
	case TierLabel:
		return "tier_" + label + "_" + r.Info
	case TenantLabel:
		return "tenant_" + label
	}
	return r.Info
}

// The values rows return, by what the number is.

func ofUint(n uint64) StatValue { return StatValue{float64(n), strconv.FormatUint(n, 10)} }

func ofInt(n int64) StatValue { return StatValue{float64(n), strconv.FormatInt(n, 10)} }

// ratio is a fraction, printed in INFO with four decimals.
func ratio(f float64) StatValue { return StatValue{f, strconv.FormatFloat(f, 'f', 4, 64)} }

// hundredths is a rate printed in INFO with two decimals, as Redis prints
// its instantaneous_*_kbps (%.2f).
func hundredths(f float64) StatValue { return StatValue{f, strconv.FormatFloat(f, 'f', 2, 64)} }

// millis is a duration: seconds in /metrics (Prometheus's unit), whole
// milliseconds in INFO (whose field ends _ms).
func millis(d time.Duration) StatValue {
	return StatValue{d.Seconds(), strconv.FormatInt(d.Milliseconds(), 10)}
}

func ofBool(b bool) StatValue { return ofInt(int64(boolInt(b))) }

// text is a string made one INFO value (no CR or LF); its /metrics number
// is the info-style 1.
func text(s string) StatValue { return StatValue{1, infoText(s)} }

func errText(err error) StatValue {
	if err == nil {
		return text("")
	}
	return text(err.Error())
}

// coldKind is the kind of a tenant's cold namespace, the part of
// backend.TenantStats.Namespace before its first ':'.
func coldKind(ns string) string {
	kind, _, _ := strings.Cut(ns, ":")
	return kind
}
