package server

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// latencySettables are the latency monitor's and latency tracking's
// parameters, with redis-server 7.0's bounds, defaults and reasons
// (config.c): latency-monitor-threshold (ms, 0..LLONG_MAX, 0: off),
// latency-tracking (yes), latency-tracking-info-percentiles ("50 99
// 99.9"; any number of them, each 0..100, "" none).
func latencySettables() []settable {
	return []settable{
		{name: "latency-monitor-threshold",
			get: func(s *Server) string { return strconv.FormatInt(s.lat.thresholdMs.Load(), 10) },
			check: intParam(0, math.MaxInt64, func(s *Server, ms int64) {
				s.lat.setThreshold(ms)
				s.retime()
			})},
		{name: "latency-tracking",
			get: func(s *Server) string { return yesNo(s.lat.tracking.Load()) },
			check: func(s *Server, v string) (func(), string) {
				on := strings.EqualFold(v, "yes")
				if !on && !strings.EqualFold(v, "no") {
					return nil, "argument must be 'yes' or 'no'"
				}
				return func() { s.lat.tracking.Store(on); s.retime() }, ""
			}},
		{name: "latency-tracking-info-percentiles",
			get: func(s *Server) string {
				ps := *s.lat.percentiles.Load()
				names := make([]string, len(ps))
				for i, p := range ps {
					names[i] = percentileName(p)
				}
				return strings.Join(names, " ")
			},
			check: checkPercentiles},
	}
}

// Redis 7.0's reasons for a bad latency-tracking-info-percentiles
// (config.c, setConfigLatencyTrackingInfoPercentilesOutputOption).
var (
	errPercentileSyntax = errors.New("Invalid latency-tracking-info-percentiles parameters")
	errPercentileRange  = errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
)

// ParseLatencyPercentiles reads latency-tracking-info-percentiles as
// setConfigLatencyTrackingInfoPercentilesOutputOption does: numbers apart
// (string2d: no space, no NaN), each within [0, 100]; "" is none. The
// error is Redis's reason, as CONFIG SET gives it.
func ParseLatencyPercentiles(v string) ([]float64, error) {
	ps := []float64{}
	for _, f := range strings.Fields(v) {
		p, err := strconv.ParseFloat(f, 64) // out of range: refused, as string2d's ERANGE
		if err != nil || math.IsNaN(p) {
			return nil, errPercentileSyntax
		}
		ps = append(ps, p)
	}
	if err := checkLatencyPercentiles(ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// checkLatencyPercentiles is Redis's bound on each percentile.
func checkLatencyPercentiles(ps []float64) error {
	for _, p := range ps {
		if math.IsNaN(p) {
			return errPercentileSyntax
		}
		if p < 0 || p > 100 {
			return errPercentileRange
		}
	}
	return nil
}

// checkPercentiles is latency-tracking-info-percentiles for CONFIG SET.
func checkPercentiles(s *Server, v string) (func(), string) {
	ps, err := ParseLatencyPercentiles(v)
	if err != nil {
		return nil, err.Error()
	}
	return func() { s.lat.percentiles.Store(&ps) }, ""
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
