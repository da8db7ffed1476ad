// Package list is the value a list is stored as, and the operations of the
// list commands on it. A value is a version byte, the element count as a
// uvarint, then each element, head first, as a uvarint length and its
// bytes. The count makes LLEN one header read; a pop from the head keeps
// the bytes after the popped elements as they are; a pop from the tail
// and an index step over lengths without copying elements. Every write
// builds the whole new value in one allocation at most, O(list bytes).
//
// The operations compute only, on a value's count and body (Push, Pop,
// End) or its decoded elements (Rotate, Insert, Remove, Positions, Range)
// with redis-server 7.0's semantics (t_list.c); the server reads the value
// and stores what they build.
//
// Quick is the list as the DRAM tiers keep it live (tier.Live): a deque
// of packed nodes, as Redis's quicklist is, changed in place by a push, a
// pop or a trim at the cost of what they touch; its record is built only
// when it is asked for.
//
// # Invariants
//
//   - VL1: Encode then Items gives the same elements in order; Size and
//     ItemSize are exactly the encoded lengths (TestEncodeItems).
//   - VL2: a value that does not decode is refused with ErrCorrupt by
//     every function that reads it, never a panic nor a read out of
//     bounds (TestCorruptValues, FuzzListEncoding).
//   - VL3: Push and Pop build byte for byte what decoding, pushing or
//     popping the elements and encoding builds, and Pop answers the
//     elements in the order popped (TestPushPopMatchItems).
//   - VL4: Limits are checked from sizes before the new value is built: a
//     Push past MaxElements or MaxBytes answers a *LimitError and leaves
//     dst as it was (TestPushLimits).
//   - VL5: Range, Insert, Remove and Positions answer as redis-server
//     7.0's LRANGE/LTRIM, LINSERT, LREM and LPOS do, negative indexes and
//     ranks from the tail (TestListOps; the server's TestListDifferential
//     runs random sequences against a redis-server).
//   - VL6: a Quick behaves as a slice of elements under pushes and pops
//     at either end, Trim, Replace, Range and Index, with elements of
//     every size, and its record is byte for byte what Encode builds of
//     its elements; LoadQuick reads it back (TestQuickModel).
//   - VL7: HeapBytes is the heap a Quick takes, from its allocations'
//     sizes (value.AllocSize), within 2% of what the heap grows by
//     (TestQuickHeapBytes).
//
// # Caveats
//
//   - Elements returned alias the value (a Quick's: until its next
//     change): valid while it is.
//   - Rotate and Insert may allocate a new element array.
package list
