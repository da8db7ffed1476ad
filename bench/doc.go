// Package bench holds tiercache's comparative benchmarks, in a module of its
// own so that otter (the peer it is measured against, with ristretto) is not
// a dependency of tiercache itself.
//
//   - BenchmarkHitRatio (hitratio_test.go): hit% at equal DRAM bytes on the
//     three workloads of issue 17 item 2 (workload.go): zipf=0.90,
//     zipf=0.99 and scan (the zipf=0.90 requests with one-time sequential
//     scans of 20% of the cache's capacity in keys, after every 1% of the
//     requests), 1M keys and 10M Zipf requests, read-through (a miss is
//     followed by a Set), budget 10% of the key space's bytes. Lines:
//     ristretto, otter, tiercache-policy (policy.LFU over a plain map,
//     charged as the peers) and tiercache-dram (the whole hot + warm tiers
//     at the same bytes, no cold); caches_test.go says exactly what each
//     cache is charged. After each workload a table: min, median, max and
//     spread of hit% per cache over the runs, whether the spread is within
//     1 point, and tiercache-dram against otter. Each tiercache run logs
//     its tier.Stats counters and its occupancy during the run (directory
//     keys, copies in transit, sampled every 1024 requests); the table
//     says when copies in transit, which serve hits but are charged to no
//     budget, added more than 1% of the capacity (then the comparison is
//     not at equal bytes).
//   - BenchmarkHitRatioCurve: hit% over memory size, zipf=0.99 and
//     zipf=0.90 at budgets of 1, 2, 5, 10 and 20% of the key space's bytes,
//     the same caches; a table per workload.
//   - BenchmarkGetHit: Get hits served by each tier, and by the peers.
//   - BenchmarkMGetCold: MGet of 1,000 keys of which 30% are only in cold;
//     reports device submissions per MGet (expected: 1) and latency.
//
// RESULTS-hitratio.md holds both benchmarks' tables from the last run
// recorded (idle and both cores busy, five runs each).
//
// Environment of the hit-ratio benchmarks:
//
//   - TIERCACHE_BENCH_SCALE (default 1) scales keys and requests, e.g. 0.3
//     (`go test -run '^$' -bench HitRatio` then took 3 minutes on this
//     machine with nothing else running: a tiercache run of 3M requests
//     ~10 s, a peer's ~2 s; several times that under load).
//   - TIERCACHE_BENCH_RUNS (default 1): runs of each cache on the same
//     sequence (stability: five runs should stay within 1 point).
//   - TIERCACHE_BENCH_BUSY=1: one shell busy loop per CPU for the duration
//     ("both cores busy").
//   - TIERCACHE_BENCH_HOTFRAC (default 0.25): tiercache's hot share of the
//     budget, the rest is warm.
//   - TIERCACHE_BENCH_COLD=1: adds a tiercache+cold line (an emulated cold
//     tier of 2 GiB on top of the same DRAM: NOT equal bytes, for
//     reference; slow, 1-2 minutes a run at scale 0.3).
//
// Run: cd bench && go test -run '^$' -bench HitRatio -benchtime 1x
//
// e.g. the stability baseline: TIERCACHE_BENCH_SCALE=0.3
// TIERCACHE_BENCH_RUNS=5 [TIERCACHE_BENCH_BUSY=1] go test -run '^$' -bench
// 'HitRatio$' -benchtime 1x -timeout 60m
//
// cmd/memload and cmd/embedload are the load clients of
// scripts/bench-memory and scripts/bench-embedding: they drive one server
// (tiercache, redis-server or memcached) on a Unix socket and check every
// value read; cmd/sharedload drives scripts/bench-shared's fleets;
// cmd/tenantload is scripts/bench-tenants' tenant a reader and b flood.
//
// cmd/report turns a run of scripts/bench into docs/BENCHMARKS.md, its PNG
// charts (gonum.org/v1/plot, a dependency of this module only) and the
// README's summary (its doc.go). internal/load holds what they share: values
// that name their key and version, the RESP and memcached connections, and
// the Zipf generator (which the benchmarks here use too).
//
// cmd/schedlat summarises a Go execution trace (scheduling latency, run
// slices, park→ready); scripts/trace-nvmekv runs it on the emulated
// namespace's Retrieve at QD 64. It lives here because it needs
// golang.org/x/exp/trace, which tiercache itself does not.
//
// # Invariants
//
//   - B1: every cache in a hit-ratio run sees the same request sequence
//     (same seed; every run of a stability series too) and the same DRAM
//     budget in bytes, and is charged key+value bytes per item.
//   - B2: a benchmark reports measured figures only; no test asserts them.
//
// # Caveats
//
//   - tiercache's key directory (tier.DirEntryBytes per key on the Go
//     heap) and its copies in transit are not part of the budget;
//     ristretto's and otter's own per-entry overheads are not either (they
//     are charged value+key bytes only). What the DRAM logs lose inside
//     the budget (segment tails, the segment a writer keeps, the 1% the
//     LFU leaves) is tiercache's to bear.
//   - The run is single-goroutine. ristretto applies its sets on a
//     goroutine of its own, so its hit% depends on scheduling; tiercache
//     without cold makes every decision on the caller's goroutine.
package bench
