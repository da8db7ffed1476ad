// Package logstore is the log under an emulated KV namespace (package
// nvmekv/emu): a ring of fixed-size regions on a device, written
// sequentially through the namespace's rings (package nvmekv/emu/rings),
// the DRAM index of the live records, the undo journal, and recovery. The
// command interpreter above it (emu) takes its lock for a batch of
// commands and stores, deletes and looks keys up through it; the read
// path (nvmekv/emu/readpath) reads records from the device at the Locs it
// gives, and checks them with CopyValue (which also checks the key of a
// record found by its tag, E30), Moved and RegionChanged.
//
// Design: the data area is a ring of fixed-size regions written
// sequentially (log-structured). Records (header + key + value, CRC32C) are
// appended to the open region's buffer in DRAM, growing forward from the
// region's start; a value whose 4096-aligned read alone is not larger than
// its inline record's 512-aligned read (4 KiB, 8000 B, 8 KiB...) goes in an
// extent instead: whole 4096-byte blocks taken from the region's end
// downward, with a 48-byte header record forward, so a 4 KiB value is read
// with one aligned 4096-byte read. A full region (forward end meets the
// extents) is written with one write; Flush writes the open region's
// unwritten forward blocks and new extents and syncs the device. The DRAM
// index (E8) is Robin Hood tables over non-pointer arrays, growing with
// the keys: an inline record's entry is a 32-bit tag of its device key
// and its Loc (region, key length, offset and size) packed in a 10-byte
// slot, in the segments of a tag index (E35) at up to 92% load, growing
// 1.1 times or splitting a segment at a time (10.9 to 12.0 B per key);
// the record header holds the full key, and whoever uses a Loc found by
// its tag checks it there (E30). An extent record's entry keeps the
// 16-byte key + the Loc (extent block and value length), 24 bytes a slot
// at up to 90% load (≈ 26.7 B per key, E25), because an extent is read
// without its header.
// On Open the index comes from the checkpoint
// that Close wrote, or by scanning every region in sequence order (but
// those a Clear emptied, E34), and appending resumes in the last region.
// Clear empties the whole log at once: the superblock records a clear
// seq, below which every region holds nothing, and the index starts
// afresh. When the ring is full, Cache mode
// reclaims the oldest region (FIFO, no copying) and reports each dropped
// key (TakeReclaimedLocked). Strict mode never drops a live record: on
// entering a fresh region it copies the live records of the oldest region
// into it (so the oldest is always free when the log wraps), makes those
// copies durable before the oldest region is overwritten, and answers
// Capacity Exceeded (SC 0x81) when live data would exceed nRegions-2
// regions.
//
// Durability: a Store or Delete is durable once a Flush that started after
// it returned nil. Concurrent Flushes are group-committed (one sync covers
// every append before it). Close makes everything durable.
//
// The invariant numbers are the namespace's (E, nvmekv/emu/doc.go lists
// every part's); a test marked emu lives in package nvmekv/emu and checks
// the invariant through the whole namespace.
//
// # Invariants
//
//   - E3: a 4096-byte block that was part of a completed Flush is never
//     written again until its region is reclaimed (Flush pads the forward
//     end to a block end; extents are whole blocks below every earlier
//     extent; after a crash appending resumes after the last valid record
//     and below the lowest extent of any valid record) (TestTornExtent,
//     TestExtentRoundTrip).
//   - E4: after a crash, Open replays regions in sequence order and stops
//     each region at its first invalid record, so every value read back is a
//     value that was stored for that key, and everything flushed is present
//     (TestCrashRecovery: 50 SIGKILLed writers). Every walk of a region
//     (the scan at Open, Cache-mode reclaim, Strict-mode evacuation)
//     checks each record's CRC32C, an extent's over its header and value,
//     and takes no value larger than MaxValueBytes, which no Loc holds
//     (FuzzWalkRegion, FuzzRegionRecords, TestWalkExtentSeeds,
//     TestWalkRefusesOversizedValue; emu
//     TestTornExtent, TestStrictEvacuatesExtents).
//   - E5: Open trusts the checkpoint only if the superblock says clean with
//     the same store id and generation; Open marks it dirty before writing
//     (TestStoreRetrieveReopen, TestCrashRecovery alternates clean and unclean).
//   - E6: in Cache mode every key dropped by reclaim is passed to OnReclaim
//     exactly once (TestCacheReclaim), except the inline keys of a region
//     that cannot be read back when it is reclaimed: the index holds only
//     their tags, so they are dropped unreported and counted
//     (Stats.UnreportedKeys); in Strict mode a region with live
//     records is never reused, and a region whose records were copied out is
//     reused only after the copies are durable (TestStrictCompaction,
//     TestCrashRecovery/strict).
//   - E7: after a failed region write (EIO, ENOSPC) Store and Delete fail
//     with ErrReadOnly wrapping the errno, and reads of data written before
//     keep working, also after reopening (TestInjectedEIO, TestENOSPC).
//   - E8: the index's slots hold no Go pointers (the tag index's
//     directory and segment headers are the only ones). An inline record's
//     entry is a tag slot of 10 bytes (TestTagSlotBytes checks
//     unsafe.Sizeof), in tag segments at up to 92% load: 10.9 to 12.0 B
//     per key (E35; BenchmarkOpen reports bytes per item). The tag is 32
//     bits of a mix of all 16 device-key bytes (tagOf), its top bits pick
//     the segment, and the home slot is fastrange of the bits below the
//     segment's prefix, so a segment grows, splits, probes and is
//     checkpointed without keys. The slot's 80 bits hold the Loc in the
//     fewest bits the store needs, L = bits(regions+1) + 4 (key length) +
//     bits(region bytes/16) + 18 (size/16, records under 4 MiB), and the
//     tag's low 32-d0 bits above it, d0 = max(0, L-48): the tag's top d0
//     bits are the prefix of its segment, as the directory starts at
//     depth d0 and a segment never gets a shorter prefix, so every tag is
//     kept whole. Regions of 4 MiB give d0 = 0 up to 255 of them, 1 at
//     256 (1 GiB), 4 at 2,048, 7 at 19,200 (75 GiB), and the largest store
//     a Loc names (2^19-2 regions of 64 MiB) 15: an index of at least
//     2^15 segments of 64 slots (21 MB, and 3.4 MB of their headers and
//     directory). A Loc the layout cannot hold
//     panics rather than be cut (TestTagSlotLayout: tags and Locs at the
//     extremes of each size packed and given back, read at depth d0 and
//     deeper; TestLogDeepSlotLayout: a sparse store of 2^16 regions, d0 =
//     3, its keys found before a close, from the checkpoint and by scan). An extent record's entry keeps its full key, a 24-byte
//     slot (≈ 26.7 B per key): an extent is read alone, without the header
//     that names its key (readpath E10, E13), and checking a tag there
//     would cost a second read per Retrieve. Extent keys start in a
//     1024-key table (27 KB) and grow as inline ones do (E25). What a
//     command costs (lookup.go; Stats.TagChecks counts header checks,
//     TagReads those read from the device, TagCollisions the ones naming
//     another key): a Retrieve of an inline record whose tag has one entry
//     reads the record as before, and the read checks its key (a
//     mismatch answers Key Does Not Exist); a tag with several entries
//     costs one header check per entry before the read. Exist, Store and
//     Delete of a key whose tag has entries check each entry's header: one
//     header read (a 512..4096-byte read at the device's alignment) for a
//     present key on the device, none when its region is still in a write
//     buffer; for an absent key, a read only on a tag false positive. A
//     lookup compares about 6 slots' tags (BenchmarkTagIndex at 10M keys:
//     6.0 for an absent tag, 7.0 for a present one), and finds every entry
//     of its tag, so an absent key meets another key's entry with
//     probability ≈ N/2^32 for N inline keys: 2.3·10⁻⁴ at 1M keys, 2.3%
//     at 100M (TestTagFalsePositiveRate).
//     List needs the keys of inline records, which only their records
//     hold: it reads every region holding a live inline record (a
//     sequential read of up to the whole log; eachKeyLocked). An extent
//     table of 2 MiB or more is an anonymous mapping off the Go heap,
//     advised to transparent huge pages (a lookup is one random access;
//     with 4 KiB pages it also misses the TLB), unmapped once no index
//     holds it; a tag segment of 64 KiB or more is a mapping of whole
//     pages, made resident in one call once the bind hook has placed it
//     (MADV_POPULATE_WRITE: a fault per page costs some 15 µs in a VM;
//     the segments an index starts with, at their first entry, so that a
//     checkpoint's load writes each while its zeroed pages are cached),
//     unmapped as soon as growth or a split replaces it (TestIndexModel,
//     TestLocPacking, TestTagSlotBytes, TestIndexOffHeapTable,
//     TestTagIndexModel; emu TestTagCheckCosts: the header reads of Exist,
//     Retrieve and an overwrite, counted). Live-byte accounting counts an
//     extent record as 48 bytes plus its blocks, and the per-region counts always add up
//     to the index (CheckAccounting; emu TestCacheReclaimExtents,
//     TestExtentRoundTrip).
//   - E11: a store written by an older on-disk format (superblock version
//     1) is refused with ErrFormat naming the file and what to do, and is
//     not modified (TestOldFormatRefused).
//   - E14: a store in a regular file has its blocks reserved (fallocate)
//     unless Options.Sparse: formatting a store larger than the
//     filesystem's free space fails Open with ENOSPC naming the path and
//     the free bytes, and nothing written later can meet ENOSPC on a
//     filesystem that overwrites in place (ext4, xfs, tmpfs; not btrfs).
//     An existing store that cannot be reserved opens with a warning
//     (TestReserve).
//   - E18: a reclaimed region is deallocated on the device (NVM Dataset
//     Management; nothing on a file, whose blocks stay reserved) before
//     anything new is written into it (guest TestNVMeNamespace: a
//     deallocated block reads back as zeros).
//   - E20: Close succeeds when only the checkpoint could not be written
//     (a full filesystem): every write is durable by then, the superblock
//     stays dirty, a warning is logged, and the next Open scans the log
//     and finds every key (TestCloseOnFullFilesystem, on a full tmpfs).
//   - E21: a failed write puts back every index change (Store, Delete,
//     evacuation) made since the last completed Flush (undo.go): a Store
//     or Delete whose Flush failed is not seen by later reads, which return
//     what a restart would (TestFailedFlushUndoesIndex). A change keeps the
//     key's Loc before and after it, so putting it back finds the entry by
//     its Loc and checks no key. The journal holds at most 65,536 changes
//     (32 bytes each); a writer that never flushes overflows it, and
//     a failed write then leaves the index as it is (Stats.UndoDropped)
//     until a completed Flush has made durable every change made while it
//     was off (TestUndoStaysOffUntilGapDurable). A key whose journaled
//     record lies in a region the log writes again goes back to absent, as
//     a restart would find it (TestUndoForgetsReclaimedRegion).
//   - E22: a store formatted over an earlier one (a device whose superblock
//     was cleared, or a file rewritten in place) never serves the earlier
//     store's records: a region header names its store, and a fresh store's
//     seqs start at a base drawn from its id, so neither an old region nor
//     an old record past the written end of a new region is replayed by a
//     scan (TestReformatIgnoresEarlierStore).
//   - E25: the index grows with the keys, not with the capacity: a new log
//     sizes its tag index for Options.ExpectedItems or 4096 keys (one 44
//     KB segment, or 2^d0 of at least 64 slots, E8) and its extent table
//     for 1024 keys (27 KB); a checkpoint
//     sizes them for its keys and 1/32 more, a scan for what it found
//     (E29). The tag index grows a segment at a time (E35). A keyed table
//     (the extent table, and the one a scan replays into) at 90% load
//     starts draining into one 1.5 times larger, which takes the new keys,
//     and every later change moves the entries of 8 slots of the full
//     table into it, so no change rebuilds the table whole (a rebuild of
//     3.4M keys took 0.77 s here), while lookups find every entry in one
//     of the two tables (TestIndexGrowsIncrementally, TestIndexModel with
//     checkIndex; emu TestIndexGrowsWithKeys: a 1 GiB namespace with
//     30,000 keys holds them in at most 72 bytes a key, where sizing for
//     the capacity took 14 MB). A drain takes about (slots + entries)/8
//     changes, some 40% of the changes between two growths, so the two
//     tables would be held whole most of the time; instead the drained
//     slots of an off-heap old table, which stay empty, go back to the
//     kernel a huge page at a time as the drain passes them (madvise
//     MADV_DONTNEED; a released slot reads as empty), and IndexBytes
//     counts only what is left of it (TestOffHeapRelease: RSS drops by the
//     pages, TestDrainReleasesOldTable).
//   - E27: Open reports how far it got rebuilding the index through
//     Options.Progress, on Open's goroutine: a new store reports once
//     ("fresh"); a checkpoint reports after its header and after each
//     4096 entries (an image, E29: each 4 MiB of it), a scan after the region headers and after each region
//     replayed — never per record, and a report is a value, so it
//     allocates nothing. Within one method Done never decreases and Total
//     stays the same; only the last report is Finished, at 100%, with the
//     index's key count and the method Stats.Recovered names (emu
//     TestOpenReportsProgress). A checkpoint found unusable part way is
//     followed by a scan, whose reports start again from 0.
//   - E28: with Options.BindIndex set, every index table that lives off
//     the Go heap (E8) — tag segment or extent table, the first ones,
//     those sized for a checkpoint, every one growth and splits make, and
//     the keyed table a scan replays into — is given to the hook, whole
//     mapping, before any of its slots is written, so a hook that binds it
//     (coldstore: mbind to cold.index_node) places every page of it; a table on
//     the Go heap (a tag segment under 64 KiB, an extent table under 2
//     MiB) is never given, and cannot be placed. A hook that fails leaves that table unbound and the index
//     working as without it; the first failure is logged and each counted
//     (Stats.IndexBindErrors), and Stats.IndexBoundBytes against
//     IndexOffHeapBytes says how much of the index is placed
//     (TestIndexBindsEveryOffHeapTable, TestLogBindIndexHook;
//     coldstore TestIndexBoundToNode with mbind to node 0; guest
//     TestColdIndexOnNode1 on the CPU-less node).
//   - E29: a clean close writes the index as checkpoint "CEMU_CK5": each
//     inline entry, its whole tag and Loc (12 bytes: not the slot's
//     packing, E8, which the checkpoint does not depend on), then each extent
//     entry, key and Loc (24 bytes), under the file's CRC; the inline
//     entries go segment by segment, each's in the order of their home
//     slots (from its first empty slot, around its end). Open inserts
//     them into tag segments and an extent table sized for them and 1/32
//     more (≈ 11.2 B per inline key), in the order written, so the inserts
//     sweep each segment once, and an entry whose home is at or after
//     those before it in its segment goes straight to the slot Robin Hood
//     insertion would give it, the first empty one from its home on
//     (tagIndex.load; the others take the insertion's walk, and one that
//     would wrap past its segment's end is added last), the tags as
//     written, hashing nothing, so a CK5 is only valid for the tagOf it
//     was written with, which its magic names. Checkpoints of earlier
//     builds still load: CK3 (entries with full keys) and CK4 (a keyed
//     table's image), their tags computed from their keys. A scan loads
//     the tag index in tag order too (E37). A checkpoint that
//     fails any check is dropped for a scan, as before (TestCheckpointImage:
//     CK5, CK3 and CK4 written through a test seam, flipped bytes;
//     TestCheckpointInlineLocPastRegion: an inline Loc past its region's
//     end under a good CRC, which no tag slot holds, is scanned instead;
//     a header counting more entries than the file holds is dropped
//     before an index is sized for the count, which would map up to 11
//     bytes for every 40 of the log before the CRC is read
//     (TestCheckpointCountPastFile, CK5 and CK3); one whose regions'
//     live counts are not what its entries hold (an entry given twice)
//     is dropped too (TestCheckpointDuplicateEntry);
//     TestTagIndexLoad: entries in each's order, in tag order and
//     shuffled, into an index sized for them and one an eighth of that,
//     checked for Robin Hood order; BenchmarkTagIndexLoad).
//   - E30: a tag shared by other keys is never taken for the key: no
//     Retrieve serves another key's value, no Store replaces and no Delete
//     removes another key's entry, and each entry of the tag costs a
//     command at most one record-header check; reclaim, Strict evacuation
//     and the undo journal (E21) find entries by their exact Loc and check
//     no key (TestTagCollisionModel: tags cut to 3 bits; stores, overwrites,
//     extents, deletes, retrieves, Cache-mode reclaim and reopens by
//     checkpoint and by scan against a map, in Cache and in Strict mode).
//   - E31: Stats.FullKeyItems is the number of live index entries, in
//     the tag index and the extent table (a draining old one included),
//     whose device key is 16 bytes long (Loc.KLen), exact at every moment:
//     every change of the index (store, overwrite, delete, Cache-mode
//     reclaim, Strict copy-forward, the undo journal, dropping an
//     unreadable region) counts the Locs it removes and adds, and Open
//     counts the entries it loads from the checkpoint or a scan
//     (TestTagCollisionModel: a third of its keys are 16 bytes long, and
//     the count equals the model's after every command and every reopen
//     by checkpoint and by scan; emu TestFailedFlushUndoesIndex: after
//     the undo journal puts changes back).
//   - E32: TagRangeLocked(from, n) visits, under the read lock, every
//     live index entry (tag index and extent table, a draining old extent
//     table included) whose tag (TagOf of its device key) is in [from, next),
//     each once, and returns next > from (TagSpace at the end), chosen so
//     that about n entries are visited when tags are spread evenly (at
//     least one tag; every entry of a tag in one call): a walk from 0
//     resumed at each next visits every entry live throughout it exactly
//     once, whatever the tables' growth and splits in between, since a
//     key's tag never changes. The tag index is walked through the
//     directory over the segments whose prefixes meet the range, in tag
//     order, each from the range's first tag's home slot (fastrange of the
//     bits below the prefix, which grows with the tag) to its last one's
//     and the tail of its probe run, wrapping past the segment's end, so a
//     call costs the slots of its range, not the index; the extent table
//     is walked whole (TestTagRangeWalk: random spans over an index of
//     segments of at most 256 slots, grown, split and past the cap, with
//     half its tags in the top 2^20; TestTagRangeLocked).
//   - E33: ScanTags gives fn each live record with a klen-byte device key
//     whose tag is in [from, next), with its key and its value's first
//     prefix bytes, read after the lock is let go (from the write buffer,
//     under it, for a region not written yet). A read counts only if its
//     record header names the region incarnation the index named and,
//     under the read lock again, the key's entry is still that Loc in
//     that incarnation; otherwise the record's tag is walked and read
//     again (a record overwritten, copied forward or reclaimed meanwhile),
//     at most 100 times before an error. So a key live throughout the
//     call is never skipped, no key is given twice in one call, and none
//     with another key's bytes (emu TestScanUserKeysDuringMoves: walks
//     under overwrites, Cache-mode reclaim and Strict copy-forward;
//     TestScanUserKeysModel).
//     by checkpoint and by scan).
//   - E34: Clear drops every record stored before it at a cost that does
//     not grow with the keys: it writes the superblock (version 4) with
//     the clear seq S, the seq the next region will take, and syncs it,
//     then starts a fresh index (the old tables are not walked; their
//     off-heap pages go back to the kernel at once, E25) and zeroes
//     every region's live counts; it reads and writes no region,
//     abandoning the open one. When it returns nil, no key stored before
//     is found (Items counts only later Stores) and the accounting adds
//     up, and so after a clean close and after a crash: a scan skips
//     every region whose seq is below S, unread, and appends in a region
//     of seq S or more. Records stored after it are kept. A crash inside
//     it leaves every record it had or none (the superblock write is its
//     one device change). Cleared regions are reused as empty ones:
//     Cache-mode reclaim reports none of their keys (E6), Strict mode
//     moves nothing out of them, and the undo journal holds no change
//     from before the Clear (E21). A failed superblock write or sync
//     leaves the index as it was and the log read-only (E7); a
//     version-2 store answers errors.ErrUnsupported, changing nothing; a
//     full filesystem does not fail it (it allocates nothing). A store
//     is formatted as version 3 and written as version 4 by its first
//     Clear; version 2 and 3 superblocks read as S = 0, and a damaged
//     clear record is refused with ErrFormat (TestClear: 100k keys in
//     Cache and Strict mode, reopened from the checkpoint and after a
//     crash; TestClearThenCrash; TestClearThenReclaim: the log refilled
//     past its capacity, CheckAccounting; TestClearSuperblockVersions;
//     TestClearReleasesIndex: 300k keys, every old page released;
//     emu TestClearNamespace: Retrieve and Exist through the namespace;
//     emu TestClearCrash: a SIGKILLed child that stores, flushes and
//     clears, 30 kills per mode, never leaves part of a round; emu
//     TestClearSuperblockFails: EIO on the write and on the sync; emu
//     TestClearEmptiesUndoJournal: a failed write after a Clear brings
//     back no cleared key; emu
//     TestClearOnFullFilesystem; emu TestClearConcurrent: Stores,
//     Retrieves and Flushes beside two Clears, under -race too; emu
//     BenchmarkClear: 1M keys).
//   - E35: the tag index is segmented by tag prefix (extendible hashing):
//     a directory of 2^D segment pointers, indexed by a tag's top D bits
//     (D ≤ 16), each segment a tag table of the tags of a d-bit prefix (d
//     ≤ D) at up to 92% load. One more entry in a full segment first makes
//     room in it: one under the 1 MiB cap grows into a table 1.1 times
//     larger (off the heap, rounded down to whole pages while that leaves
//     room), and one at the cap splits into two of prefix depth d+1 (the
//     directory doubles when d+1 passes D), each sized for its entries
//     times 1.1; a split of a segment whose entries share the next bits
//     goes down to the first bit that divides them, an empty 64-slot
//     segment taking each prefix in between, and a segment that no bit
//     within D ≤ 16 divides (forced tag collisions) grows past the cap
//     instead. Growth and splits move a segment's entries in the order of
//     their homes, each straight to its slot, as a checkpoint's load does
//     (E29). The directory never has fewer than 2^d0 segments (E8). So a
//     change reinserts at most one segment (≈ 96,000 entries, 1.5 to 2 ms
//     here, but for a segment past the cap), every lookup probes one
//     segment, and an index filled from empty, as a log's is, holds at
//     most 12 bytes a key at every count above 100,000 and about 2^d0·180
//     (the 2^d0 first segments, of at least 64 slots and a 104-byte
//     header and directory slot each, grow in step: up to d0 = 9 from
//     100,000 on, 185,000 keys at d0 = 10, 5.9M for the largest store, d0
//     = 15) (10 × 1.1 / 0.92 = 11.96 right after a growth or split, 10.87
//     just before; rounding an off-heap segment up to whole pages, a page
//     more each as they grow in step, took a directory of depth 4 to 9
//     past 12, to 12.16). A replaced
//     segment's mapping is unmapped at once. Deletes never shrink a
//     segment (TestTagIndexBytesBound: 2M keys, 500k under -short, at most
//     12 B a key from 100k on, checked every 1000, at d0 = 0, 4 and 8;
//     TestTagIndexModel:
//     adds, repoints and removals against a map with a 512-slot cap, tags
//     even and cut to a few bits, and slots holding a tag's low 23 bits
//     under prefixes of at least 9; TestTagCollisionModel through a log;
//     BenchmarkTagIndex: lookups and adds at 10M entries).
//   - E36: with Options.ReplayBatch n > 0, a scan (E4) replays into a
//     keyed table (24-byte slots: a later record of a key finds the
//     earlier one without a read), gathering its records' index changes
//     in batches of n and applying each batch sorted by the home slot of
//     its keys in that table, stably: a key's changes keep their log
//     order and changes of different keys commute, so the index and every
//     region's live count are those of a replay in log order, whatever
//     the batch; it builds the key index from the table at the end, so it
//     holds both for a moment (TestScanReplayOrder: batches of 1, 7,
//     1000, and 0, the tag buckets of E37; BenchmarkOpen's scan-keyed, n
//     = 2M, was the default scan before E37, and scan-inorder, n = 1, the
//     replay in log order).
//   - E37: each region a scan reads is walked (E4) on a goroutine of its
//     own, up to len(WriteBuffers) at once beside the replay, which takes
//     their changes region by region in seq order (a walk done reads the
//     next region into its buffer, while its changes wait). By default
//     (ReplayBatch 0) a region's walk groups its records' index changes
//     (key, Loc or delete; 24 bytes), in log order, by the top 8 bits of
//     their keys' tags, and the scan appends each group to one of 256
//     buckets. Once
//     every region is read, the key index's directory depth is chosen
//     for the winners expected (the changes held, scaled by the share of
//     winners in the largest bucket, settled first), so that a group of
//     buckets covers whole segments (one bucket, or the buckets of one
//     segment), and the groups are settled and loaded on as many
//     goroutines as CPUs (up to 4): a group's changes sorted by tag,
//     stably (an LSD radix sort), the last change of each key wins, a
//     delete leaves the key absent, and each of its segments is made for
//     its winners and 1/32 more and loaded in tag order as a
//     checkpoint's is (E29), each winner adding to its region's live
//     count; the group's memory goes back once loaded. The index, Items,
//     FullKeyItems, LiveBytes and every region's live count are those of
//     a replay in log order. Beside the index a scan holds the changes,
//     24 bytes each, off the heap in chunks of up to 3 MiB but for a
//     bucket's first 92 KB, and the changes of up to 2·len(WriteBuffers)
//     regions walked and not yet taken, and of one group per goroutine
//     being settled; a bucket that
//     reaches 2^19 changes and 4 per winner at its last settle (checked
//     after each region's changes) is settled early (the chunks past its
//     winners' unmapped, later changes appended after them, so a key's
//     changes stay in log order), so a scan holds at most about 3 GiB or
//     96 bytes per live key of changes, however many records are dead
//     (TestTagReplaySettle: 200,000 changes of 20,000 keys, tags whole,
//     cut to 3 top bits and to 3 low bits, settled at the end and early
//     from 1000 changes;
//     TestScanTagReplay: inline and extent records, keys of 1 to 16
//     bytes, overwrites and deletes, reopened by both routes, tags whole
//     and cut, segments capped at 87,381, 64 and 16 slots (one group of
//     all buckets, 2 buckets a segment, 2 segments a bucket), the tag
//     index checked for Robin Hood order; TestTagReplayBuildDepth:
//     200,000 changes of 20,000 keys, the directory as deep as for the
//     keys; BenchmarkOpen's scan against scan-keyed).
//
// # Caveats
//
//   - Strict mode copies live data forward (write amplification grows with
//     the live fraction). If a crash leaves the oldest region live and the
//     resumed region without room to absorb it, Strict mode stays full until
//     deletes free that region.
//   - An off-heap index table (E8) is unmapped by a runtime cleanup after
//     the GC finds it unreachable, not at Close: its DRAM returns at the
//     next GC after the log is dropped. It is not counted in the Go heap,
//     so GOGC does not see it.
//   - Only off-heap tables can be placed (E28): a tag segment under 64
//     KiB (an index of up to about 6,000 inline keys) or an extent table
//     under 2 MiB (about 78,000 extent keys at 90% load) lives on the Go
//     heap, on whatever node the runtime's memory is, whatever BindIndex
//     does.
//   - A tag segment (E35) is its own mapping of 4 KiB pages, of up to 1
//     MiB, so a lookup in a large index may miss the TLB where one
//     huge-page table would not (BenchmarkTagIndex), and a large index
//     takes a mapping per segment (about 2,000 at 100M keys) of the
//     process's vm.max_map_count (65,530 by default). Deletes leave
//     segments their size.
//   - Keys equal after zero padding but of different lengths ("a" and "a\x00")
//     share an index entry; a lookup with the other length misses.
//   - Exist, and a Store or Delete of an existing inline key, read the
//     record's header from the device under the log's lock (E8) unless
//     its region is still in a write buffer: a synchronous read each. List
//     reads every region holding a live inline record.
//   - A Retrieve of an absent key whose tag has one entry reads that
//     entry's record (probability ≈ N/2^32 for N inline keys, E8).
//   - A Flush pads to a block boundary: frequent flushes of small records
//     cost up to 4 KiB each.
//   - A scan (E37) holds 24 bytes for every record of the log until a
//     bucket settles early (E37): up to about 3 GiB of changes (134M
//     records) for a log of overwrites whose live keys would fit a much
//     smaller table, and 96 bytes a live key past that, where the keyed
//     table of E36 held 26.7 bytes a live key.
//   - The checkpoint is a side file (Path+".ckpt"); block devices and NVMe
//     namespaces have none by default and are scanned on every Open.
//   - Clear tells OnReclaim nothing about the keys it drops (the caller
//     knows it cleared), and Stats.UsedRegions counts the regions it
//     emptied until each is reused. A build older than Clear refuses a
//     store that was cleared (superblock version 4), rather than serve
//     its cleared records again.
//   - ScanTags reads the records of a call with synchronous reads, 32 at
//     a time, of each record's header, key and value prefix, records at
//     most 32 KiB apart coalesced into one read of up to 1 MiB. Tag order
//     is not log order: a walk with a small n is a random read per key
//     (BenchmarkScanUserKeys, 1M keys: 35k keys/s at n = 1024, 323k at
//     n = 65,536, against 448k device keys/s for one List of the whole
//     store, which reads it sequentially). TagRangeLocked walks the
//     extent table whole each call (extents are rare: values of 3.5 KB
//     and more).
//   - An extent wastes the rest of its last block (a 3545-byte value takes
//     4096 bytes plus a 48-byte header).
package logstore
