package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// redis: scripts/bench-redis, server CPU per request by command.
func (rp *report) redis() {
	b := rp.run.bench("redis")
	cases := b.cases()
	if !rp.section("redis", "CPU per request against redis-server", len(cases) > 0) {
		return
	}
	rp.para("redis-benchmark (`-c 50`; SET, GET and MGET of 1,536-byte values, the counters and hashes of 3-byte " +
		"values, one list of small elements) against tiercache and redis-server on Unix sockets, one server after " +
		"the other in each round. CPU per request is the server process's user + system time over the requests " +
		"(/proc/PID/stat); pinned as the command says, each server has a core to itself. " +
		"Below 1×, tiercache spends less CPU per request.")
	var rows [][]string
	var ratios []summary
	for _, c := range cases {
		r := b.ratio(c, "tiercache", "redis", "cpu_us")
		ratios = append(ratios, r)
		rows = append(rows, []string{c, b.stat(c, "redis", "cpu_us").format(2), b.stat(c, "tiercache", "cpu_us").format(2),
			"**" + r.times() + "**", b.ratio(c, "tiercache", "redis", "rps").times()})
	}
	rp.table([]string{"command", "redis-server, µs CPU", "tiercache, µs CPU", "CPU, tiercache / redis-server",
		"requests/s, tiercache / redis-server"}, rows)
	rp.chart("bench-cpu.png", "server CPU per request, tiercache / redis-server, by command", func(path string) error {
		return ratioChart(path, "Server CPU per request, tiercache / redis-server (lower is better)",
			"tiercache / redis-server: median of the rounds, bar: their range", cases, ratios)
	})
	var hl []string
	for _, c := range []string{"GET -P 16", "SET -P 16", "GET -P 1", "SET -P 1"} {
		if r := b.ratio(c, "tiercache", "redis", "cpu_us"); r.ok() {
			hl = append(hl, fmt.Sprintf("%s %s", c, r.times()))
		}
	}
	if len(hl) > 0 {
		rp.bullets = append(rp.bullets, "server CPU per request, tiercache / redis-server: "+strings.Join(hl, ", "))
	}
}

// memory: scripts/bench-memory, peak RSS at equal DRAM budgets.
func (rp *report) memory() {
	b := rp.run.bench("memory")
	cases := b.cases()
	if !rp.section("memory", "Peak RSS at the same DRAM budget as redis-server and memcached", len(cases) > 0) {
		return
	}
	rp.para("bench/cmd/memload writes every key once, then sends Zipf(0.99) requests from 8 connections, 80%% GET " +
		"(a miss followed by a SET: read-through) and 20%% SET, checking every value read. Each server runs alone, " +
		"restarted for each round. The DRAM budget is tiercache's hot + warm bytes (its cold tier on, on a file), " +
		"redis-server's maxmemory (allkeys-lru) and memcached's -m. Peak RSS is VmHWM; the hit ratio is of the " +
		"load's GETs. tiercache's bound (issue 17) is 1.10 × the budget + 272 B a key + 32 MiB.")
	var rows [][]string
	var groups []string
	series := []barSeries{{name: "tiercache"}, {name: "redis"}, {name: "memcached"}}
	bound := &barMarks{series: "tiercache", label: "tiercache's bound"}
	for _, c := range cases {
		cell := func(s string) string {
			rss := b.stat(c, s, "rss_mib")
			if !rss.ok() {
				return "–"
			}
			return fmt.Sprintf("%s MiB, hit ratio %s", rss.format(0), b.stat(c, s, "hit_ratio").format(3))
		}
		bd := b.stat(c, "tiercache", "bound_mib")
		within := "–"
		if rss := b.stat(c, "tiercache", "rss_mib"); rss.ok() && bd.ok() {
			within = "within"
			if rss.hi > bd.med {
				within = "**over**"
			}
		}
		rows = append(rows, []string{c, cell("redis"), cell("memcached"), cell("tiercache"),
			"**" + b.ratio(c, "tiercache", "redis", "rss_mib").times() + "**", b.ratio(c, "tiercache", "memcached", "rss_mib").times(),
			bd.format(0) + " MiB: " + within})
		groups = append(groups, shortCase(c))
		for i := range series {
			series[i].vals = append(series[i].vals, b.stat(c, series[i].name, "rss_mib"))
		}
		bound.vals = append(bound.vals, bd)
	}
	rp.table([]string{"values, keys, DRAM budget", "redis-server", "memcached", "tiercache", "RSS, tiercache / redis-server",
		"RSS, tiercache / memcached", "tiercache's bound"}, rows)
	rp.chart("bench-memory.png", "peak RSS of tiercache, redis-server and memcached at the same DRAM budget", func(path string) error {
		return barChart(path, "Peak RSS at the same DRAM budget (median, bar: range)", "MiB", groups, series, bound)
	})
	c := cases[0]
	if r := b.ratio(c, "tiercache", "redis", "rss_mib"); r.ok() {
		rp.bullets = append(rp.bullets, fmt.Sprintf("peak RSS, %s (tiercache with its cold tier): %s redis-server's, "+
			"hit ratio %s against redis-server's %s and memcached's %s", c, r.times(),
			b.stat(c, "tiercache", "hit_ratio").format(3), b.stat(c, "redis", "hit_ratio").format(3),
			b.stat(c, "memcached", "hit_ratio").format(3)))
	}
}

var memCase = regexp.MustCompile(`^(\d+) B x (\d+) keys, DRAM (\S+)$`)

// shortCase: "1536 B x 100000 keys, DRAM 100MiB" as a chart's two-line
// label "1.5 KiB × 100K / 100MiB".
func shortCase(c string) string {
	m := memCase.FindStringSubmatch(c)
	if m == nil {
		return c
	}
	size, _ := strconv.Atoi(m[1])
	keys, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("%s × %s\n%s", bytesLabel(size), countLabel(keys), m[3])
}

func bytesLabel(n int) string {
	if n >= 1024 && n%128 == 0 {
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", float64(n)/1024), "0"), ".0") + " KiB"
	}
	return fmt.Sprintf("%d B", n)
}

func countLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dK", n/1000)
	}
	return strconv.Itoa(n)
}

// embeddingServers are bench-embedding's servers, ours first.
var embeddingServers = []string{"tiercache", "redis-all", "redis-lru", "memcached-ext"}

// embedding: scripts/bench-embedding, MGET latency and hit ratio.
func (rp *report) embedding() {
	b := rp.run.bench("embedding")
	cases := b.cases()
	if !rp.section("embedding", "Embedding lookups against redis-server and memcached with extstore", len(cases) > 0) {
		return
	}
	rp.para("bench/cmd/embedload sends MGETs of 256 keys drawn Zipf(0.99) out of the vectors (memcached: a get of " +
		"the 256 keys), every vector checked, and SETs the missed ones after each MGET (read-through). The " +
		"servers run at once and take turns in each round. tiercache has the DRAM budget in hot + warm and its " +
		"cold tier on a file; redis-all holds everything in RAM; redis-lru has maxmemory at the budget " +
		"(allkeys-lru); memcached-ext has -m at the budget and extstore on a file as large as tiercache's cold " +
		"tier (`-o ext_path=FILE:SIZE,slab_automove=2`): the other DRAM-plus-flash cache. Peak RSS is read after " +
		"the last round.")
	c := cases[0]
	var rows [][]string
	var series []barSeries
	for _, s := range embeddingServers {
		p99 := b.stat(c, s, "p99_us")
		if !p99.ok() {
			continue
		}
		ratio := "–"
		if s != "tiercache" {
			ratio = "**" + b.ratio(c, "tiercache", s, "p99_us").times() + "**"
		}
		rows = append(rows, []string{s, b.stat(c, s, "hit_ratio").format(3), b.stat(c, s, "vectors_per_s").format(0),
			scaled(b.stat(c, s, "p50_us"), 1e-3).format(1), scaled(p99, 1e-3).format(1), ratio,
			b.stat(c, s, "rss_mib").format(0)})
		series = append(series, barSeries{name: s, vals: []summary{scaled(b.stat(c, s, "p50_us"), 1e-3), scaled(p99, 1e-3)}})
	}
	rp.para("%s:", c)
	rp.table([]string{"server", "hit ratio", "vectors/s", "MGET p50, ms", "MGET p99, ms", "MGET p99, tiercache / this",
		"peak RSS, MiB"}, rows)
	if bd := b.stat(c, "tiercache", "bound_mib"); bd.ok() {
		rp.para("tiercache's bound on its RSS here: %s MiB.", bd.format(1))
	}
	rp.chart("bench-embedding.png", "MGET latency of tiercache, redis-server and memcached with extstore", func(path string) error {
		return barChart(path, "MGET of 256 vectors: latency (median of rounds, bar: range)", "ms",
			[]string{"p50", "p99"}, series, nil)
	})
	if r := b.ratio(c, "tiercache", "memcached-ext", "p99_us"); r.ok() {
		rp.bullets = append(rp.bullets, fmt.Sprintf("embedding lookups (%s): hit ratio %s against memcached+extstore's %s "+
			"and redis-lru's %s; MGET p99 %s memcached+extstore's, %s redis-server's with everything in RAM",
			c, b.stat(c, "tiercache", "hit_ratio").format(3), b.stat(c, "memcached-ext", "hit_ratio").format(3),
			b.stat(c, "redis-lru", "hit_ratio").format(3), r.times(), b.ratio(c, "tiercache", "redis-all", "p99_us").times()))
	}
}

// scaled is s with every figure multiplied by f.
func scaled(s summary, f float64) summary {
	s.med, s.lo, s.hi = s.med*f, s.lo*f, s.hi*f
	return s
}

// sharedFleets are bench-shared's fleets, ours first.
var sharedFleets = []string{"shared", "independent", "redis"}

// shared: scripts/bench-shared, a fleet of replicas through the remote tier.
func (rp *report) shared() {
	b := rp.run.bench("shared")
	cases := b.cases()
	if !rp.section("shared", "A fleet sharing what it computes: the remote tier", len(cases) > 0) {
		return
	}
	rp.para("bench/cmd/sharedload runs the replicas at once; each reads vectors as MGETs of 256 keys drawn " +
		"Zipf(0.99) through its own server and \"computes\" (writes back) every vector it misses. Fleets, each " +
		"started empty, in turn in each round: shared (a sidecar per replica with the remote tier on a local Redis " +
		"Cluster of 3 masters), independent (the same sidecars without it) and redis (every replica a client of one " +
		"redis-server). Server CPU counts every server process of the fleet, the cluster's included.")
	c := cases[0]
	var rows [][]string
	var names []string
	var recs []summary
	for _, f := range sharedFleets {
		rec := b.stat(c, f, "recomputes")
		if !rec.ok() {
			continue
		}
		rows = append(rows, []string{f, rec.format(0), b.stat(c, f, "hit_ratio").format(3),
			scaled(b.stat(c, f, "p50_us"), 1e-3).format(1), scaled(b.stat(c, f, "p99_us"), 1e-3).format(1),
			b.stat(c, f, "cpu_us_per_mget").format(0)})
		names, recs = append(names, f), append(recs, rec)
	}
	rp.para("%s:", c)
	rp.table([]string{"fleet", "recomputes", "hit ratio", "MGET p50, ms", "MGET p99, ms", "server CPU per MGET, µs"}, rows)
	rp.table([]string{"ratio, per round", "median (range)"}, [][]string{
		{"recomputes, independent / shared (goal: at least the replica count)", "**" + b.ratio(c, "independent", "shared", "recomputes").times() + "**"},
		{"MGET p99, shared / independent (goal: at most 1.5×)", b.ratio(c, "shared", "independent", "p99_us").times()},
		{"MGET p99, shared / one redis-server", b.ratio(c, "shared", "redis", "p99_us").times()},
		{"server CPU per MGET, shared / one redis-server", b.ratio(c, "shared", "redis", "cpu_us_per_mget").times()},
	})
	rp.chart("bench-shared.png", "vectors recomputed by a shared fleet, independent sidecars and one redis-server", func(path string) error {
		return namedBars(path, "Vectors the fleet computed (median of rounds, bar: range)", "recomputes", names, recs)
	})
	if r := b.ratio(c, "independent", "shared", "recomputes"); r.ok() {
		line := fmt.Sprintf("a fleet of replicas (%s): independent sidecars computed %s as many "+
			"vectors as sidecars sharing them through the remote tier", c, r.times())
		if ideal := b.ratio(c, "independent", "redis", "recomputes"); ideal.ok() {
			line += fmt.Sprintf(" (the most sharing can save here, independent / one redis-server: %s)", ideal.times())
		}
		if p99 := b.ratio(c, "shared", "independent", "p99_us"); p99.ok() {
			line += fmt.Sprintf("; MGET p99 %s the independent sidecars'", p99.times())
		}
		rp.bullets = append(rp.bullets, line)
	}
}
