package server

import (
	"errors"
	"strings"
	"testing"
)

// TestLatencyOptions (S112): Options' latency settings are what CONFIG
// GET answers from the first command, and what the server does (a
// threshold above 0 times commands even with the slow log off); unset
// they are Redis's defaults; a negative threshold or a percentile out of
// [0, 100] is refused by Validate naming the parameter.
func TestLatencyOptions(t *testing.T) {
	s, path := startServer(t, func(o *Options) {
		o.LatencySet, o.LatencyMonitorThreshold, o.LatencyTracking = true, 7, false
		o.LatencyTrackingInfoPercentiles = []float64{90, 99.99}
		o.SlowlogSet, o.SlowlogLogSlowerThan, o.SlowlogMaxLen = true, -1, 0
	})
	c := dialRaw(t, path)
	c.expect([]step{
		{[]string{"CONFIG", "GET", "latency-monitor-threshold"}, "*[$latency-monitor-threshold $7]"},
		{[]string{"CONFIG", "GET", "latency-tracking"}, "*[$latency-tracking $no]"},
		{[]string{"CONFIG", "GET", "latency-tracking-info-percentiles"}, "*[$latency-tracking-info-percentiles $90 99.99]"},
	})
	if !s.timing.Load() {
		t.Errorf("latency-monitor-threshold 7 from Options: commands not timed")
	}
	_, path = startServer(t, func(o *Options) { o.LatencySet = true }) // none: threshold 0, tracking off, no percentiles
	dialRaw(t, path).expect([]step{
		{[]string{"CONFIG", "GET", "latency-tracking*"}, "*[$latency-tracking $no $latency-tracking-info-percentiles $]"},
	})
	_, path = startServer(t, nil)
	dialRaw(t, path).expect([]step{
		{[]string{"CONFIG", "GET", "latency-*"}, "*[$latency-monitor-threshold $0 $latency-tracking $yes $latency-tracking-info-percentiles $50 99 99.9]"},
	})
	o := Options{UnixSocket: "x.sock", LatencySet: true, LatencyMonitorThreshold: -1, LatencyTrackingInfoPercentiles: []float64{50, 101}}
	o.EnsureDefaults()
	err := o.Validate()
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "latency-monitor-threshold -1") ||
		!strings.Contains(err.Error(), "latency-tracking-info-percentiles [50 101]") {
		t.Errorf("Validate: %v, want latency-monitor-threshold -1 and latency-tracking-info-percentiles [50 101] refused", err)
	}
	for in, want := range map[string]error{"50 99": nil, "": nil, "1e2": nil, "50 abc": errPercentileSyntax, "NaN": errPercentileSyntax,
		"100.1": errPercentileRange, "-0.5": errPercentileRange} {
		if _, err := ParseLatencyPercentiles(in); !errors.Is(err, want) {
			t.Errorf("ParseLatencyPercentiles(%q): %v, want %v", in, err, want)
		}
	}
}
