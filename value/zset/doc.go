// Package zset is the record a sorted set is stored as, and the
// operations of the sorted-set commands on it. A record is a version byte,
// the member count as a uvarint, then the entries in ascending order of
// score and, for equal scores, of member bytes (Redis's order), each as
// its score (an IEEE 754 double, 8 bytes little-endian) then the member's
// length as a uvarint and its bytes.
//
// The commands read and change a sorted set through the ZSet interface.
// Sorted is the sorted set as the DRAM tiers keep it live (tier.Live),
// changed in place: a member index (value.Table) and blocks of at most
// BlockEntries entries in Redis's order with a Fenwick tree of their
// counts (a B-tree of two levels), so a score is a probe, and an add, a
// removal, a rank or a rank's entry O(log n). Entries is the record
// decoded into a sorted slice of entries aliasing it, for the commands
// that read several sorted sets or compute one (the algebra,
// ZRANGESTORE, ZSCAN). Head reads the first entries of a record without
// decoding the rest.
//
// # Invariants
//
//   - VZ1: Encode then Decode gives the same entries in Redis's order, and
//     Size is exactly the encoded length (TestEncodeDecode).
//   - VZ2: a record that does not decode (cut short, a trailing byte, a
//     length past its end or written with more bytes than it needs,
//     entries out of order, a NaN score, an unknown version) is refused
//     with ErrCorrupt, never a panic (TestCorruptRecords, FuzzDecode).
//   - VZ3: Entries behaves as a map of member to score kept in Redis's
//     order: after any sequence of Put and Remove, Score, Rank, At and the
//     range searches agree with a model that sorts a map (TestEntriesModel).
//   - VZ4: Combine (ZUNION, ZINTER, ZDIFF and their STORE forms) gives the
//     scores redis-server 7.0 gives: weights, SUM/MIN/MAX, a NaN sum as 0
//     (TestCombine; the server's TestZSetDifferential runs random
//     sequences against a redis-server).
//   - VZ5: Limits are checked before a record is built: a sorted set past
//     MaxMembers or MaxBytes answers a *set.LimitError (TestLimits).
//   - VZ6: a Sorted answers as Entries does under the same Put, Remove
//     and RemoveRanks, -0 included: Score, Rank, At, EachRank and the
//     spans agree, its record is the one Entries builds, Size is its
//     length, and LoadSorted reads it back (TestSortedModel).
//   - VZ7: a Sorted's HeapBytes is within 2% of what the heap grows by
//     (TestSortedHeapBytes).
//
// # Caveats
//
//   - Members alias the record they were decoded from (and the arguments
//     they were added from): valid while those are.
//   - Entries' member lookups (Score, Rank, Put, Remove) scan the
//     entries: O(n); Sorted's are O(log n).
//   - An Entries is not safe for concurrent use.
package zset
