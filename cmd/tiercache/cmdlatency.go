package main

import (
	"maps"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// familyLatency exports tiercache_command_family_duration_seconds: the
// per-command histograms (tiercache_command_duration_seconds) summed by
// family (commandFamilies) when scraped. A command is observed once, in
// its own histogram; the families cost nothing per command, and a
// family's buckets are exactly the sum of its commands' (C12).
type familyLatency struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	cmds map[string]map[string]prometheus.Metric // family → command → its histogram
}

func newFamilyLatency() *familyLatency {
	return &familyLatency{
		desc: prometheus.NewDesc(prometheus.BuildFQName(metricNamespace, "", "command_family_duration_seconds"),
			"Time to execute one command, by command family (tiercache_command_duration_seconds summed by family).",
			[]string{"family"}, nil),
		cmds: map[string]map[string]prometheus.Metric{},
	}
}

// add makes h, cmd's histogram, part of its family's.
func (f *familyLatency) add(cmd string, h prometheus.Metric) {
	fam := commandFamily(cmd)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cmds[fam] == nil {
		f.cmds[fam] = map[string]prometheus.Metric{}
	}
	f.cmds[fam][cmd] = h
}

// Describe sends the one descriptor (a checked collector).
func (f *familyLatency) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

// Collect sums each family's command histograms into one.
func (f *familyLatency) Collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fam := range slices.Sorted(maps.Keys(f.cmds)) {
		var (
			count   uint64
			sum     float64
			buckets = map[float64]uint64{}
			d       dto.Metric
		)
		cmds := f.cmds[fam]
		for _, c := range slices.Sorted(maps.Keys(cmds)) {
			h := cmds[c]
			d.Reset()
			if err := h.Write(&d); err != nil {
				ch <- prometheus.NewInvalidMetric(f.desc, err)
				return
			}
			hd := d.GetHistogram()
			count += hd.GetSampleCount()
			sum += hd.GetSampleSum()
			for _, b := range hd.GetBucket() {
				buckets[b.GetUpperBound()] += b.GetCumulativeCount()
			}
		}
		ch <- prometheus.MustNewConstHistogram(f.desc, count, sum, buckets, fam)
	}
}
