// Package warm is tiercache's warm tier: values kept off the Go heap in a
// numa.Arena (typically bound to a CPU-less CXL memory node), found through
// a pointer-free index, written to a segmented log and evicted a segment at
// a time, with evicted live items handed to a demotion callback (the
// flusher, towards the cold tier).
//
// Layout: the arena is split into Shards equal parts; each shard has its
// own RWMutex, index and log of SegmentBytes segments (one of them a spare).
// A record is a 32-byte header (hash, expiry, version, value length, key
// length and flags), the full key and the value, 8-byte aligned (record.go).
// The index maps the key's xxh3 hash to gen<<40 | offset, gen being the
// segment's reuse generation. Get takes the shard's read lock, compares the
// stored key, copies the value into the caller's buffer and sets the
// record's hit flag atomically. When the tail segment is full and no free
// segment is left, the oldest segment is evicted: live records read since
// they were written get a second chance (copied into the spare segment,
// which becomes the new tail, flag cleared; CLOCK / S3-FIFO style), expired
// records are dropped, all other live records go to OnEvict.
//
// # Invariants
//
// W1: the arena never holds a Go pointer, and the index is made of slices of
// pointer-free structs, so the GC never scans item data.
// W2: Get returns a value only when the full stored key equals the requested
// key; a 64-bit hash collision is a miss, and a Set that collides pushes the
// other key out through OnEvict (Stats.Displaced).
// W3: every index entry points at a record in a segment whose current
// generation matches the entry's; a segment's live entries are removed or
// moved before the segment is reused, and its generation is bumped.
// W4: every live, unexpired item leaving the cache by eviction is passed to
// OnEvict exactly once, with its key, value and Meta; Delete, overwrite and
// expiry never call it.
// W5: eviction always makes progress: the second chance rescues at most half
// a segment (and never more than leaves room for the record being written),
// so a Set of a record that fits a segment never fails for lack of space.
// W6: Get on a hit allocates nothing when dst has room for the value.
// W7: an item whose Expiry is at or before Clock() is never returned by Get,
// Has or ForEach; a Set with such an expiry deletes the key.
// W8: SetIfNewer never replaces a live item that has a higher Version.
// W9: Stats.Evictions equals the number of OnEvict calls (when set).
// W10: Close is idempotent; after it Get misses and Set returns ErrClosed.
//
// # Caveats
//
// OnEvict runs inside Set with the shard's write lock held: it must not
// block and must not call the Cache; its slices alias the arena and are
// valid only during the call. The values passed to ForEach's fn alias the
// arena the same way. Sets to one shard are serialized; Gets of one shard
// share a read lock. Expired items occupy space until their segment is
// evicted. The order of eviction is FIFO per shard, not global. Close does
// not demote: drain first with ForEach if the items must survive.
package warm
