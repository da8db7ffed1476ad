// Package set is the record a set is stored as, and the operations of the
// set commands on it. A record is a version byte, the member count as a
// uvarint, then the members in ascending byte order, each as a uvarint
// length and its bytes. Sorted members make a membership test a binary
// search once decoded, and the algebra (SINTER, SUNION, SDIFF) merges.
//
// Live is a set as the DRAM tiers keep it live (tier.Live): a
// value.Table of its members, changed in place by SADD, SREM, SPOP,
// SMOVE; its record (sorted) is built when asked for. The commands that
// read several sets at once or in order (the algebra, SSCAN, SRANDMEMBER
// with a count) read records decoded into Members, the Set interface's
// implementation over a sorted slice.
//
// # Invariants
//
//   - VS1: Encode then Decode gives the same members in ascending order,
//     and Size is exactly the encoded length (TestEncodeDecode).
//   - VS2: a record that does not decode (cut short, a trailing byte, a
//     length past its end or written with more bytes than it needs,
//     members out of order or repeated, an unknown version) is refused
//     with ErrCorrupt, never a panic (TestCorruptRecords, FuzzDecode).
//   - VS3: Members behaves as a set of strings: Add, Remove and Has agree
//     with a map after any sequence of them, and Each visits the members
//     in ascending order (TestMembersModel).
//   - VS4: Inter, Union and Diff give the members a model of sets gives
//     (TestAlgebraModel).
//   - VS5: stepping a set with ScanStep returns each member present for
//     the whole scan exactly once, whatever is added or removed between
//     steps (TestScanStepExactlyOnce).
//   - VS6: Limits are checked before a record is built: a set past
//     MaxMembers or MaxBytes answers a *LimitError (TestLimits).
//   - VS7: a Live behaves as a set under Add and Remove; its record is
//     byte for byte the one Members builds of the same members, Size is
//     its length, and LoadLive reads it back (TestLiveModel).
//   - VS8: a Live's HeapBytes is within 2% of what the heap grows by
//     (TestLiveHeapBytes).
//
// # Caveats
//
//   - Members alias the record they were decoded from (and the arguments
//     they were added from): valid while those are.
//   - A Members is not safe for concurrent use.
package set
