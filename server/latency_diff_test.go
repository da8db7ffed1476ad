package server

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLatencyMatchesRedis is S105: LATENCY's help, errors and the replies
// that do not depend on time (no event yet, RESET's counts, the DOCTOR
// of a monitor never on), its three parameters' CONFIG GET and CONFIG
// SET with their refusals, LATENCY in MULTI and in a script (refused but
// HELP), in RESP2 and RESP3, are redis-server 7.0's byte for byte.
func TestLatencyMatchesRedis(t *testing.T) {
	eachProto(t, 1, func(t *testing.T, p *peers, proto int) {
		for _, args := range [][]string{
			{"LATENCY"},
			{"LATENCY", "HELP"},
			{"latency", "help", "x"},
			{"LATENCY", "foo"},
			{"LATENCY", "foo", "bar"},
			{"LATENCY", "LATEST"},
			{"LATENCY", "LATEST", "x"},
			{"LATENCY", "HISTORY"},
			{"LATENCY", "HISTORY", "command"},
			{"LATENCY", "HISTORY", "command", "x"},
			{"LATENCY", "GRAPH"},
			{"LATENCY", "GRAPH", "command"},
			{"LATENCY", "GRAPH", "no\r\nsuch"},
			{"LATENCY", "GRAPH", "a", "b"},
			{"LATENCY", "DOCTOR"},
			{"LATENCY", "DOCTOR", "x"},
			{"LATENCY", "RESET"},
			{"LATENCY", "RESET", "command", "fast-command", "x"},
			{"LATENCY", "HISTOGRAM", "nosuchcommand", "get|x", "config|nosuch", "a|b|c"},
			{"CONFIG", "GET", "latency-monitor-threshold"},
			{"CONFIG", "GET", "latency-tracking"},
			{"CONFIG", "GET", "latency-tracking-info-percentiles"},
			{"CONFIG", "SET", "latency-monitor-threshold", "-1"},
			{"CONFIG", "SET", "latency-monitor-threshold", "x"},
			{"CONFIG", "SET", "latency-tracking", "maybe"},
			{"CONFIG", "SET", "latency-tracking", "1"},
			{"CONFIG", "SET", "latency-tracking-info-percentiles", "50 abc"},
			{"CONFIG", "SET", "latency-tracking-info-percentiles", "150"},
			{"CONFIG", "SET", "latency-tracking-info-percentiles", "-1"},
			{"CONFIG", "SET", "latency-tracking-info-percentiles", "nan"},
			{"CONFIG", "SET", "latency-tracking-info-percentiles", "1e999"},
			{"CONFIG", "GET", "latency-tracking-info-percentiles"},
			{"CONFIG", "SET", "latency-tracking-info-percentiles", "0 25.5 99.99 100"},
			{"CONFIG", "GET", "latency-tracking-info-percentiles"},
			{"CONFIG", "SET", "latency-tracking-info-percentiles", ""},
			{"CONFIG", "GET", "latency-tracking-info-percentiles"},
			{"CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9"},
			{"CONFIG", "SET", "latency-monitor-threshold", "100", "latency-tracking", "nope"},
			{"CONFIG", "GET", "latency-monitor-threshold"},
			{"CONFIG", "SET", "LATENCY-TRACKING", "NO"},
			{"CONFIG", "GET", "latency-tracking"},
			{"INFO", "latencystats"},
			{"CONFIG", "SET", "latency-tracking", "yes"},
			{"MULTI"},
			{"LATENCY", "LATEST"},
			{"LATENCY", "RESET"},
			{"LATENCY", "nosuch"},
			{"EXEC"},
			{"MULTI"},
			{"LATENCY", "HISTORY", "x"},
			{"LATENCY", "HELP"},
			{"EXEC"},
			{"EVAL", "return redis.call('latency', 'latest')", "0"},
			{"EVAL", "return redis.call('latency', 'reset')", "0"},
			{"EVAL", "return redis.call('latency', 'help')", "0"},
			{"EVAL", "return redis.pcall('latency', 'graph')", "0"},
		} {
			p.same(0, args...)
		}
	})
}

// TestLatencyHistogramMatchesRedis is S106: latency tracking histograms
// the commands and subcommands redis-server 7.0 does, after CONFIG
// RESETSTAT (which drops every histogram, as Redis 7.0's) and the same
// commands: LATENCY HISTOGRAM (all, or those named with their
// subcommands) names the same commands with the same calls, each
// histogram of Redis's shape (a map in RESP3) with buckets at Redis's
// bounds, cumulative and ending at its calls; INFO latencystats names
// the same ones with Redis's line format; with latency-tracking off it is
// empty and nothing more is counted; a blocked command counts once served.
func TestLatencyHistogramMatchesRedis(t *testing.T) {
	eachProto(t, 2, func(t *testing.T, p *peers, proto int) {
		p.same(0, "CONFIG", "RESETSTAT")
		p.same(0, "SET", "a", "b")
		p.same(0, "GET", "a")
		p.same(0, "GET", "nokey")
		p.same(0, "CONFIG", "GET", "appendonly")
		p.same(0, "HSET", "h", "f", "v")
		p.same(0, "LATENCY", "HELP")
		p.same(0, "LLEN") // refused: no histogram
		for _, args := range [][]string{
			{"LATENCY", "HISTOGRAM"},
			{"LATENCY", "HISTOGRAM", "get", "CONFIG", "nosuch", "latency|help", "hset"},
			{"LATENCY", "HISTOGRAM", "set", "set"},
		} {
			// Redis answers in its dictionaries' order, tiercache by name
			ours, peer := histogramOf(t, p.ours[0].do(args...), proto), histogramOf(t, p.peer[0].do(args...), proto)
			slices.Sort(ours)
			slices.Sort(peer)
			if !slices.Equal(ours, peer) {
				t.Errorf("%q: tiercache %v, redis-server %v", args, ours, peer)
			}
		}
		line := regexp.MustCompile(`^latency_percentiles_usec_([a-z|]+):p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$`)
		stats := func(who, raw string) []string {
			var names []string
			for _, l := range strings.Split(strings.TrimSpace(verbatimText(raw)), "\r\n")[1:] {
				m := line.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("%s: INFO latencystats line %q", who, l)
				}
				names = append(names, m[1])
			}
			slices.Sort(names)
			return names
		}
		ours, peer := stats("tiercache", p.ours[0].do("INFO", "latencystats")), stats("redis-server", p.peer[0].do("INFO", "latencystats"))
		if !slices.Equal(ours, peer) || len(ours) < 6 {
			t.Errorf("INFO latencystats: tiercache %v, redis-server %v", ours, peer)
		}
		p.same(0, "CONFIG", "SET", "latency-tracking", "no")
		p.same(0, "GET", "a")
		p.same(0, "INFO", "latencystats")
		ours2, peer2 := histogramOf(t, p.ours[0].do("LATENCY", "HISTOGRAM", "get"), proto), histogramOf(t, p.peer[0].do("LATENCY", "HISTOGRAM", "get"), proto)
		if !slices.Equal(ours2, peer2) || len(ours2) != 1 || ours2[0] != "get calls=2" {
			t.Errorf("GET with latency-tracking off: tiercache %v, redis-server %v", ours2, peer2)
		}
		p.same(0, "CONFIG", "SET", "latency-tracking", "yes")
		p.same(0, "CONFIG", "RESETSTAT")
		p.same(0, "LATENCY", "HISTOGRAM", "get", "set") // none
		// a blocked command is histogrammed once served (blocked.c updateStatsOnUnblock)
		p.blockThenPush(1, []string{"BLPOP", "l", "0"}, []string{"LPUSH", "l", "x"})
		args := []string{"LATENCY", "HISTOGRAM", "blpop", "lpush"}
		ours, peer = histogramOf(t, p.ours[0].do(args...), proto), histogramOf(t, p.peer[0].do(args...), proto)
		if !slices.Equal(ours, peer) || len(ours) != 2 {
			t.Errorf("%q: tiercache %v, redis-server %v", args, ours, peer)
		}
	})
}

// histogramBounds are the µs bounds LATENCY HISTOGRAM's buckets may have:
// hdr_histogram's highest times counted with 1024·2^k ns, k = 0..19, and
// its highest time (latency_hist.go), as redis-server 7.0 answers them.
var histogramBounds = []int64{1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633,
	135266, 270532, 541065, 1073741}

// histogramOf checks a LATENCY HISTOGRAM reply's shape and answers its
// commands and calls, "name calls=n", in order: a map (RESP3) or array
// of name, then a map of "calls" and "histogram_usec", whose buckets are
// at histogramBounds, increasing, and end at calls.
func histogramOf(t *testing.T, raw string, proto int) []string {
	t.Helper()
	mapKind := byte('*')
	if proto == 3 {
		mapKind = '%'
	}
	top := parseRESP(t, raw)
	if top.kind != mapKind {
		t.Fatalf("LATENCY HISTOGRAM: %q", raw)
	}
	var out []string
	for i := 0; i < len(top.elems); i += 2 {
		name, h := bulkText(top.elems[i]), top.elems[i+1]
		if h.kind != mapKind || len(h.elems) != 4 || bulkText(h.elems[0]) != "calls" || bulkText(h.elems[2]) != "histogram_usec" || h.elems[3].kind != mapKind {
			t.Fatalf("histogram of %s: %q", name, h.raw)
		}
		calls := intOf(t, h.elems[1])
		var last, prev int64 = 0, 0
		b := h.elems[3].elems
		for j := 0; j < len(b); j += 2 {
			us, n := intOf(t, b[j]), intOf(t, b[j+1])
			if !slices.Contains(histogramBounds, us) || us <= prev || n <= last {
				t.Fatalf("histogram of %s: bucket %d µs of %d runs after %d µs of %d: %q", name, us, n, prev, last, h.raw)
			}
			prev, last = us, n
		}
		if last != calls || calls == 0 {
			t.Fatalf("histogram of %s: %d calls, its last bucket %d", name, calls, last)
		}
		out = append(out, name+" calls="+strconv.FormatInt(calls, 10))
	}
	return out
}

// bulkText is a bulk (or simple) string node's text.
func bulkText(n respNode) string {
	_, rest, _ := strings.Cut(n.raw, "\r\n")
	if n.kind == '+' || n.kind == '-' || n.kind == ':' {
		return n.raw[1 : len(n.raw)-2]
	}
	return strings.TrimSuffix(rest, "\r\n")
}

// verbatimText is a bulk or verbatim string reply's text (its "txt:"
// cut).
func verbatimText(raw string) string {
	_, rest, _ := strings.Cut(raw, "\r\n")
	rest = strings.TrimSuffix(rest, "\r\n")
	if raw[0] == '=' {
		rest = rest[4:]
	}
	return rest
}

func intOf(t *testing.T, n respNode) int64 {
	t.Helper()
	v, err := strconv.ParseInt(strings.TrimSuffix(n.raw[1:], "\r\n"), 10, 64)
	if n.kind != ':' || err != nil {
		t.Fatalf("not an integer: %q", n.raw)
	}
	return v
}

// TestLatencyMonitorMatchesRedis is S107: with latency-monitor-threshold
// at 20 ms, a script that runs at least 50 ms (it loops on TIME until
// then: no timing assumed; thresholds the machine's load rarely makes
// another command reach) adds one "command" sample on both servers (a
// "fast-command" sample of a slow TIME is dropped first), as
// redis-server 7.0's: LATEST names it with its time and a latency of at
// least 50 ms, HISTORY has one sample, GRAPH and DOCTOR write Redis's
// text around it, RESET drops it (1); with the threshold at 0 nothing
// more is sampled, and DOCTOR then says so as Redis does.
func TestLatencyMonitorMatchesRedis(t *testing.T) {
	slow := []string{"EVAL", "local t = redis.call('TIME') local s = t[1]*1000000 + t[2] " +
		"repeat local u = redis.call('TIME') until u[1]*1000000 + u[2] - s >= 50000 return 1", "0"}
	eachProto(t, 1, func(t *testing.T, p *peers, proto int) {
		p.same(0, "CONFIG", "SET", "latency-monitor-threshold", "20")
		for _, c := range []*rawPeer{p.ours[0], p.peer[0]} {
			c.do("LATENCY", "RESET") // the CONFIG SET's own sample, if the machine's load made it take 20 ms
		}
		p.same(0, "LATENCY", "LATEST")
		p.same(0, "LATENCY", "DOCTOR") // on, nothing yet
		p.same(0, slow...)
		for side, c := range []*rawPeer{p.ours[0], p.peer[0]} {
			who := []string{"tiercache", "redis-server"}[side]
			// a TIME of the script's that took 20 ms (the machine's load)
			// is a fast-command sample on either server (S111): dropped
			c.do("LATENCY", "RESET", "fast-command")
			latest := parseRESP(t, c.do("LATENCY", "LATEST"))
			if len(latest.elems) != 1 || len(latest.elems[0].elems) != 4 || bulkText(latest.elems[0].elems[0]) != "command" {
				t.Fatalf("%s: LATEST %q", who, latest.raw)
			}
			e := latest.elems[0].elems
			unix, ms, high := intOf(t, e[1]), intOf(t, e[2]), intOf(t, e[3])
			if unix <= 0 || ms < 50 || high < ms {
				t.Errorf("%s: LATEST %q", who, latest.raw)
			}
			hist := parseRESP(t, c.do("LATENCY", "HISTORY", "command"))
			if len(hist.elems) != 1 || intOf(t, hist.elems[0].elems[0]) != unix || intOf(t, hist.elems[0].elems[1]) != ms {
				t.Errorf("%s: HISTORY %q", who, hist.raw)
			}
			if r := c.do("LATENCY", "HISTORY", "COMMAND"); r != "*0\r\n" {
				t.Errorf("%s: HISTORY of COMMAND (names are exact) %q", who, r)
			}
			graph := verbatimText(c.do("LATENCY", "GRAPH", "command"))
			head := "command - high " + strconv.FormatInt(ms, 10) + " ms, low " + strconv.FormatInt(ms, 10) + " ms (all time high " +
				strconv.FormatInt(high, 10) + " ms)\n" + strings.Repeat("-", 80) + "\n \n \n \n_\n \n"
			if !strings.HasPrefix(graph, head) || !regexp.MustCompile(`\n\d\n(\d\n)?s\n$`).MatchString(graph) {
				t.Errorf("%s: GRAPH %q", who, graph)
			}
			doctor := verbatimText(c.do("LATENCY", "DOCTOR"))
			want := "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n" +
				"1. command: 1 latency spikes (average " + strconv.FormatInt(ms, 10) + "ms, mean deviation 0ms, period "
			if !strings.HasPrefix(doctor, want) || !strings.Contains(doctor, "- Check your Slow Log to understand") {
				t.Errorf("%s: DOCTOR %q", who, doctor)
			}
		}
		p.same(0, "LATENCY", "RESET", "COMMAND", "command")
		p.same(0, "LATENCY", "LATEST")
		p.same(0, "CONFIG", "SET", "latency-monitor-threshold", "0")
		p.same(0, slow...)
		p.same(0, "LATENCY", "LATEST")
		p.same(0, "LATENCY", "DOCTOR")
	})
}
