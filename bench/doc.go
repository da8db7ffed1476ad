// Package bench holds tiercache's comparative benchmarks, in a module of its
// own so that otter (the peer it is measured against, with ristretto) is not
// a dependency of tiercache itself.
//
//   - BenchmarkHitRatio: Zipf(0.9) and Zipf(0.99) over 1M keys, 10M requests
//     (cache-aside: a miss is followed by a Set), at equal DRAM (hot + warm
//     for tiercache, MaxCost/MaximumWeight for the peers). The cold tier is
//     flash and comes on top. TIERCACHE_BENCH_SCALE (default 1) scales keys
//     and requests, e.g. 0.1.
//   - BenchmarkGetHit: Get hits served by each tier, and by the peers.
//   - BenchmarkMGetCold: MGet of 1,000 keys of which 30% are only in cold;
//     reports device submissions per MGet (expected: 1) and latency.
//
// Run: cd bench && go test -run '^$' -bench . -benchtime 1x   (hit ratio)
//
// cmd/memload and cmd/embedload are the load clients of
// scripts/bench-memory and scripts/bench-embedding: they drive one server
// (tiercache, redis-server, or memcached for memload) on a Unix socket and
// check every value read. internal/load holds what they share: values
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
//     (same seed) and the same DRAM budget in bytes.
//   - B2: a benchmark reports measured figures only; no test asserts them.
//
// # Caveats
//
//   - tiercache's key directory (about 100 bytes per key on the Go heap) is
//     not part of the budget; ristretto's and otter's own per-entry overheads
//     are not either (they are charged value+key bytes only).
package bench
