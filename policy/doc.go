// Package policy decides, and stores nothing: which keys the DRAM tiers
// keep (LFU: a weighted W-TinyLFU with an adaptive window, over intrusive
// Nodes its owner embeds in its own records), which warm or cold hits are
// promoted (Promotion: a TinyLFU-style frequency sketch behind a
// doorkeeper, weighted by value size) and which evictions may be written
// to flash (Flash: a write budget in bytes per second, a token bucket in
// the spirit of CacheLib's dynamic random admission, plus optional
// reject-on-first-sight).
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
//   - P7: an LFU's weight is the sum of its resident Nodes' weights and
//     never exceeds its capacity once a call returned; every Node leaves
//     exactly once, by an eviction reported to the caller's function or by
//     Remove; the adaptive window and the protected share stay within the
//     capacity (TestLFUModel).
//   - P8: items read a few times keep their places against a scan of
//     one-time items many times the capacity (TestLFUScanResistance), and
//     a candidate more frequent than probation's least recently used item
//     takes its place (TestLFUAdmitsTheMoreFrequent).
//   - P9: among items nobody read again, the newer stays: a burst of fresh
//     items keeps the newest, as an LRU would
//     (TestLFUKeepsNewestOfOneTimeItems).
//   - P10: an LFU is deterministic: the same calls evict the same Nodes in
//     the same order, whatever the machine is doing (TestLFUDeterministic).
//   - P11: the LFU's frequency sketch is sized for twice its resident
//     items until they weigh half its capacity, then for twice Items, and
//     growing it changes no estimate (TestSketchGrowKeepsEstimates).
//
// # Caveats
//
//   - Counts are approximate (count-min: over-estimates on collisions).
//   - Promotion and Flash are safe for concurrent use (lock-free CAS loops,
//     the token bucket a mutex); an LFU is not: its owner serializes every
//     call, and its Nodes' fields change only inside them.
package policy
