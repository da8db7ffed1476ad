// Package zset is the record a sorted set is stored as, and the
// operations of the sorted-set commands on it. A record is a version byte,
// the member count as a uvarint, then the entries in ascending order of
// score and, for equal scores, of member bytes (Redis's order), each as
// its score (an IEEE 754 double, 8 bytes little-endian) then the member's
// length as a uvarint and its bytes.
//
// The commands read and change a sorted set through the ZSet interface.
// Entries is its one implementation today: a record decoded into a sorted
// slice of entries aliasing it, changed in memory and encoded whole again,
// so a write costs O(set bytes). A structure that changes in place (a
// skiplist or B-tree with a member index, issue 32 item 1) can implement
// ZSet instead without the commands changing. Head reads the first
// entries of a record without decoding the rest (ZRANGE 0 9).
//
// # Invariants
//
//   - VZ1: Encode then Decode gives the same entries in Redis's order, and
//     Size is exactly the encoded length (TestEncodeDecode).
//   - VZ2: a record that does not decode (cut short, a trailing byte, a
//     length past its end, entries out of order, a NaN score, an unknown
//     version) is refused with ErrCorrupt, never a panic (TestCorruptRecords,
//     FuzzDecode).
//   - VZ3: Entries behaves as a map of member to score kept in Redis's
//     order: after any sequence of Put and Remove, Score, Rank, At and the
//     range searches agree with a model that sorts a map (TestEntriesModel).
//   - VZ4: Combine (ZUNION, ZINTER, ZDIFF and their STORE forms) gives the
//     scores redis-server 7.0 gives: weights, SUM/MIN/MAX, a NaN sum as 0
//     (TestCombine; the server's TestZSetDifferential runs random
//     sequences against a redis-server).
//   - VZ5: Limits are checked before a record is built: a sorted set past
//     MaxMembers or MaxBytes answers a *set.LimitError (TestLimits).
//
// # Caveats
//
//   - Members alias the record they were decoded from (and the arguments
//     they were added from): valid while those are.
//   - Member lookups (Score, Rank, Put, Remove) scan the entries: O(n).
//   - An Entries is not safe for concurrent use.
package zset
