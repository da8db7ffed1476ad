// Package policy decides, and stores nothing: which warm or cold hits are
// promoted and which hot victims deserve warm memory (Promotion: a
// TinyLFU-style frequency sketch behind a doorkeeper, weighted by value
// size) and which warm evictions may be written to flash
// (Flash: a write budget in bytes per second, a token bucket in the spirit
// of CacheLib's dynamic random admission, plus optional reject-on-first-
// sight).
//
// # Invariants
//
//   - P1: a key seen once since the last reset is not promoted (its
//     estimate is 1: the doorkeeper bit, no counter) unless its doorkeeper
//     probes are false positives (probability ≈ (2k/8n)² for k keys in a
//     sketch of n counters).
//   - P2: the estimate of a key never decreases between resets, and a reset
//     halves every counter and clears the doorkeeper after 10 × Counters
//     recorded accesses.
//   - P3: a larger value needs more hits: each doubling above SizeUnit adds
//     one to the hits needed for hot; values above MaxHotValue never go hot.
//   - P4: Demote keeps warm memory for hot victims seen at least DemoteHits
//     times (default 2); one-hit wonders skip warm (the tier asks only
//     once warm is full and a cold tier takes writes, tier T20).
//   - P5: Flash admits at most Burst + BytesPerSec × elapsed bytes; with
//     RejectFirst the first offer of a key is always refused.
//   - P6: RecordSampled records SampleEvery accesses at once in one call of
//     SampleEvery on average (at random), so its expected count is the
//     number of calls (up to the counters' saturation at 16).
//
// # Caveats
//
//   - Counts are approximate (count-min: over-estimates on collisions).
//   - Safe for concurrent use; updates are lock-free CAS loops except the
//     token bucket (a mutex).
package policy
