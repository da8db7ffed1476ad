package main

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// TestEveryCommandHasAFamily (C12): every command the server times is in
// one family of commandFamilies (none is "other"), and every command a
// family lists is one the server has.
func TestEveryCommandHasAFamily(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	fl := sc.met.families
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if other := fl.cmds[otherFamily]; len(other) > 0 {
		for c := range other {
			t.Errorf("command %q has no family: add it to commandFamilies (cmd/tiercache/cmdfamily.go)", c)
		}
	}
	timed := map[string]bool{}
	for _, cmds := range fl.cmds {
		for c := range cmds {
			timed[c] = true
		}
	}
	for fam, cmds := range commandFamilies {
		for _, c := range cmds {
			if !timed[c] {
				t.Errorf("family %s lists %q, which the server does not have", fam, c)
			}
		}
	}
}

// TestFamilyHistogramSumsCommands (C12): on the real sidecar, each
// family's histogram is its commands' histograms summed: the same count,
// sum and cumulative bucket counts.
func TestFamilyHistogramSumsCommands(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	ctx := context.Background()
	rc := newClient(t, sc, 2)
	for i := range 50 {
		rc.Set(ctx, "k", i, 0)
		rc.Get(ctx, "k")
		rc.MGet(ctx, "k", "nope")
		rc.HSet(ctx, "h", "f", i)
		rc.LPush(ctx, "l", i)
		rc.Expire(ctx, "k", time.Hour)
	}
	fams, err := sc.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	type hist struct {
		count   uint64
		sum     float64
		buckets []uint64
	}
	add := func(h *hist, m *dto.Histogram) {
		h.count += m.GetSampleCount()
		h.sum += m.GetSampleSum()
		if h.buckets == nil {
			h.buckets = make([]uint64, len(m.GetBucket()))
		}
		for i, b := range m.GetBucket() {
			h.buckets[i] += b.GetCumulativeCount()
		}
	}
	want, got := map[string]*hist{}, map[string]*hist{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				switch {
				case f.GetName() == metricNamespace+"_command_duration_seconds" && l.GetName() == "command":
					fam := commandFamily(l.GetValue())
					if want[fam] == nil {
						want[fam] = &hist{}
					}
					add(want[fam], m.GetHistogram())
				case f.GetName() == metricNamespace+"_command_family_duration_seconds" && l.GetName() == "family":
					if got[l.GetValue()] != nil {
						t.Errorf("family %s twice", l.GetValue())
					}
					got[l.GetValue()] = &hist{}
					add(got[l.GetValue()], m.GetHistogram())
				}
			}
		}
	}
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("families %d, want %d (one per family of the commands timed)", len(got), len(want))
	}
	for fam, w := range want {
		g := got[fam]
		if g == nil || g.count != w.count || math.Abs(g.sum-w.sum) > 1e-9*w.sum || !slices.Equal(g.buckets, w.buckets) {
			t.Errorf("family %s: %+v, want the sum of its commands %+v", fam, g, w)
		}
	}
	for _, fam := range []string{"string_read", "string_write", "hash", "list", "keyspace"} {
		if got[fam] == nil || got[fam].count < 50 {
			t.Errorf("family %s observed %+v, want at least the 50 commands sent", fam, got[fam])
		}
	}
}

// BenchmarkObserveLatency is the cost per command of timing it into its
// histogram (what ObserveLatency's function does; the clock read is the
// server's): alone, and from every P at once on one command's histogram,
// as concurrent GETs do.
func BenchmarkObserveLatency(b *testing.B) {
	m := newMetrics()
	obs := m.observe("get")
	b.Run("serial", func(b *testing.B) {
		for i := range b.N {
			obs(time.Duration(i & 1023))
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				obs(time.Duration(i & 1023))
				i++
			}
		})
	})
}
