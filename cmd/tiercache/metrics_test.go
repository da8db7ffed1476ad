package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tiercache/tiercache/server"
)

// TestInfoAndMetricsAgree (C6): on the real sidecar, every row of server's
// stats table is an INFO field (a per-tier row once for each of hot, warm
// and cold, a per-tenant row as <Info>= in each tenant's line) and, but
// for an INFO-only row, a metric the registry gathers, of the row's type,
// with one sample per tier for a per-tier row (per tenant for a
// per-tenant row); a text row's label is its INFO value; each of
// memoryRows is a gauge of its INFO memory field's value; and every
// tiercache_ metric but the command latencies (per command and per
// family) is a row's.
func TestInfoAndMetricsAgree(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Tenants = []TenantConfig{{Name: "a", Prefix: "a:", Quota: 1 << 20}}
	sc := startTestSidecar(t, cfg)
	ctx := context.Background()
	rc := newClient(t, sc, 2)
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	sections, err := rc.InfoMap(ctx, "everything").Result()
	if err != nil {
		t.Fatal(err)
	}
	info := map[string]string{}
	for _, sec := range sections {
		for k, v := range sec {
			info[k] = v
		}
	}
	fams, err := sc.met.reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	family := map[string]int{}
	for i, f := range fams {
		family[f.GetName()] = i
	}
	tiers := []string{"hot", "warm", "cold"}
	tenants := []string{"default", "a"}
	fromTable := map[string]bool{metricNamespace + "_command_duration_seconds": true,
		metricNamespace + "_command_family_duration_seconds": true}
	for _, r := range memoryRows {
		name := prometheus.BuildFQName(metricNamespace, "", r.metric)
		fromTable[name] = true
		i, ok := family[name]
		if !ok || len(fams[i].GetMetric()) != 1 || fams[i].GetType().String() != "GAUGE" {
			t.Errorf("/metrics lacks the gauge %s (INFO %s)", name, r.info)
			continue
		}
		if got := strconv.FormatFloat(fams[i].GetMetric()[0].GetGauge().GetValue(), 'f', -1, 64); got != info[r.info] {
			t.Errorf("%s = %s, INFO %s:%s", name, got, r.info, info[r.info])
		}
	}
	for _, r := range server.StatTable() {
		fields := []string{r.InfoField("")}
		switch r.Label {
		case server.TierLabel:
			fields = nil
			for _, tr := range tiers {
				fields = append(fields, r.InfoField(tr))
			}
		case server.TenantLabel:
			fields = nil
			for _, tn := range tenants {
				fields = append(fields, r.InfoField(tn))
				if !strings.Contains(info[r.InfoField(tn)], r.Info+"=") {
					t.Errorf("INFO %s:%s lacks %s=", r.InfoField(tn), info[r.InfoField(tn)], r.Info)
				}
			}
		}
		for _, f := range fields {
			if _, ok := info[f]; !ok {
				t.Errorf("INFO lacks %s", f)
			}
		}
		if r.Metric == "" {
			continue
		}
		name := prometheus.BuildFQName(metricNamespace, "", r.Metric)
		fromTable[name] = true
		i, ok := family[name]
		if !ok {
			t.Errorf("/metrics lacks %s (INFO %s)", name, r.Info)
			continue
		}
		want := "GAUGE"
		if r.Kind == server.StatCounter {
			want = "COUNTER"
		}
		if got := fams[i].GetType().String(); got != want {
			t.Errorf("%s is a %s, want a %s", name, got, want)
		}
		var labels []string
		for _, m := range fams[i].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == r.Label {
					labels = append(labels, l.GetValue())
				}
			}
		}
		switch {
		case r.Label == server.TierLabel:
			if slices.Sort(labels); !slices.Equal(labels, slices.Sorted(slices.Values(tiers))) {
				t.Errorf("%s has tiers %q, want %q", name, labels, tiers)
			}
		case r.Label == server.TenantLabel:
			if slices.Sort(labels); !slices.Equal(labels, slices.Sorted(slices.Values(tenants))) {
				t.Errorf("%s has tenants %q, want %q", name, labels, tenants)
			}
		case r.Kind == server.StatText:
			if len(labels) != 1 || labels[0] != info[r.Info] {
				t.Errorf("%s has %s %q, INFO %s:%s", name, r.Label, labels, r.Info, info[r.Info])
			}
		case len(fams[i].GetMetric()) != 1:
			t.Errorf("%s has %d samples, want 1", name, len(fams[i].GetMetric()))
		}
	}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), metricNamespace+"_") && !fromTable[f.GetName()] {
			t.Errorf("/metrics has %s, which no row of server's stats table makes", f.GetName())
		}
	}
}
