// Package nvmekv speaks the NVMe Key Value command set (CSI 1) and maps a
// cache's user keys and values onto it.
//
// Layers, bottom up:
//
//   - Commands: Command mirrors the 64-byte NVMe submission entry; EncodeStore,
//     EncodeRetrieve, EncodeDelete, EncodeExist, EncodeList, EncodeIdentify
//     build them (opcodes Store 0x01, Retrieve 0x02, List 0x06, Delete 0x10,
//     Exist 0x14; NVMe KV Command Set Specification 1.0, §3.2). PackKey and
//     UnpackKey are the one key packer (xNVMe/SPDK layout). UringCmd is
//     struct nvme_uring_cmd (include/uapi/linux/nvme_ioctl.h), the form the
//     kernel takes at byte 48 of a 128-byte SQE (docs/DESIGN.md §10.4).
//     DecodeResult turns cqe.res into nil, an errno or a *StatusError whose
//     Unwrap gives ErrKeyNotFound, ErrKeyExists, ErrCapacityExceeded,
//     ErrInvalidValueSize, ErrInvalidKeySize or ErrUnrecovered.
//   - Namespace: Store/Retrieve/Delete/Exist/List on device keys of 1..16
//     bytes, single or batched (Do: one submission, Link chains kept), Flush
//     for durability, Limits from Identify. Implemented by Passthrough
//     (/dev/ngXnY through io_uring NVME_URING_CMD_IO) and by nvmekv/emu (the
//     emulated namespace, the default cold store).
//   - KV: user keys (1..MaxKeyBytes) → 16-byte device keys (Hasher, XXH3-128
//     by default); each record is a header (magic, version, full user key,
//     value length, flags, expiry, version, put ID, CRC32C) plus the value
//     inline, or chunks under derived 15-byte device keys (ChunkKeyIn's
//     first 15 bytes, K16) when it does not fit one Store. UserKeys counts
//     the user keys of a namespace that counts its 16-byte device keys
//     (KeyCounter).
//
// # Invariants
//
//   - K1: every command's bytes match the Common Command Format (NVMe Base
//     Specification) with the KV fields of KV Command Set 1.0 §3.1–§3.2:
//     opcode at 0, NSID at 4, key bytes 0..7 at 8, CDW10 at 40, key length at 44, options at 45, key
//     bytes 8..15 at 56; inside a 128-byte SQE they are at 48 + the
//     nvme_uring_cmd offsets (TestEncodeVectors, TestUringCmdVector).
//   - K2: a key of 0 (except List) or more than 16 bytes is never encoded:
//     ErrInvalidKeySize.
//   - K3: cqe.res > 0 decodes as SCT = res>>8&7, SC = res&0xff, DNR = 0x4000,
//     MORE = 0x2000, and SCT 0 SC 0x81/0x85/0x86/0x87/0x88/0x89 match the six
//     sentinels with errors.Is; -ECANCELED is ErrCanceled (TestDecodeResult).
//   - K4: a Get returns a value only if the header's user key equals the
//     requested key, every chunk carries the header's put ID and index, and
//     the CRC32C over header, key and value matches; a different key, a stale
//     chunk or an expired record (unless KVOptions.KeepExpired) is
//     ErrKeyNotFound, a CRC mismatch ErrUnrecovered (emu TestKVModel with a
//     weak hash forcing collisions, TestKVExpiry).
//   - K5: a Put is one linked chain, chunks first and header last, so a chain
//     that fails never publishes its header (emu TestKVFailedChainHidesHeader).
//   - K6: Delete reads the header (to check the user key), then deletes the
//     header first and then the chunks, in one linked chain. DeleteMany does
//     the same for many keys in two submissions: every header read, then
//     every chain (emu TestDeleteManyTwoSubmissions; TestKVModel compares
//     it with the model).
//   - K7: a Retrieve whose stored size (DW0) exceeds the host buffer is
//     retried with a buffer of exactly that size (TestKVModel/shortbuf). A
//     Get told the value's size (GetSized, GetManySized) sizes its first
//     Retrieve for the whole inline record, so it takes one round trip; a
//     wrong size changes nothing but the number of Retrieves (TestKVModel
//     with random hints, TestGetSizedOneRoundTrip).
//   - K8: Passthrough reads the namespace CSI (Identify CNS 03h) before any
//     I/O and never sends a KV opcode unless CSI == 1 (ErrNotKV names the
//     device and its CSI) (TestRefuseNonKV; the live check runs in the QEMU guest).
//   - K9: ParseList and ParseNSDescriptors never read past their buffer and
//     return keys of 1..16 bytes only (TestListFormat, FuzzParseList).
//   - K10: KV.Clear deletes every device key present when it started,
//     whoever wrote it (the namespace must be the cache's alone), when it
//     returns nil. A namespace that clears itself (Clearer: the emulated
//     one, emu E34, O(1) in the keys) does so, durably, and Clear returns
//     ClearedAll (-1: it counts nothing); any other (a KV SSD), or one
//     whose Clear answers errors.ErrUnsupported, is Listed from its first
//     key and every key listed Deleted until List returns nothing, and
//     Clear returns how many it deleted; a List that keeps returning keys
//     Delete cannot find ends it with an error instead of a loop
//     (emu TestKVClear: both paths, through the emulated namespace and
//     through a wrapper that hides its Clear; emu BenchmarkClear on one
//     store: 1M keys in 0.73 ms and 100k in 0.71 ms through the
//     namespace's Clear, against 1.9 s for 100k and 277 s for 1M by
//     List+Delete).
//   - K11: a record's chunks are in one of two chunk sets (header byte 5,
//     ChunkKeyIn). A chunked Put first reads the header it replaces and
//     writes its chunks in the set that header does not use, so a Put cut
//     short before its header is written (a crash, a failed chain) leaves
//     the old record readable; once the new header is written the old
//     set's chunks are deleted. Delete and Get follow the header's set
//     (emu TestChunkedOverwriteCutShortKeepsOldValue).
//   - K12: Passthrough keeps the Link contract (a failed command cancels
//     the rest of its chain with ErrCanceled) for NVMe status failures too,
//     which io_uring links do not see: chains run in waves, one submission
//     per chain position (Passthrough.doChains; vmtest/guest/kvtcp
//     TestKVConformanceThroughKernel/LinkedChain through the Linux driver).
//   - K13: chunks a put cut short left behind (its header written, its
//     cleanup not run: a crash) do not stay for ever: every put that
//     writes or replaces chunks deletes the leftovers of both sets past
//     what it uses and cleans up (KVStats.LeftoverChunks;
//     TestLeftoverChunksSwept).
//   - K14: a record of more than 8 chunks (chunkWindow) is written and read
//     8 chunks per submission, its header last and alone (K5 holds: a
//     failed window stops the put before its header); a read has the next
//     window's reads in flight while it checks and copies one, and a
//     failed chunk fails it once every read in flight ended
//     (TestBigValueGetFailsMidWay); with one P (GOMAXPROCS=1) too: the
//     reader yields once it started the next window's Do, which is
//     submitted before more than one chunk of the window ahead of it was
//     copied, and yields between chunks (emu TestBigValueReadAheadOneP);
//     through chunk buffers off the Go heap that the KV lends again (up to
//     16 kept free) rather than fresh ones, with its CRC and copies a MiB
//     at a time and a yield between: a warm Put of a big value allocates a
//     small part of it, a Get about the value it returns (emu
//     TestBigValueInWindows, TestBigValueAllocs,
//     TestBigValueFailedWindowHidesHeader); a PutMany writes what it
//     batched before a big value first, so items keep their order
//     (TestPutManyKeepsOrderAroundBigValues).
//   - K15: the buffers of header records, the Retrieves of Get, GetMany
//     and their sized forms and the Stores of PutMany's chains, are lent
//     by power-of-two size class (512 B to 64 KiB) and taken back only
//     once Do returned (the namespace holds a buffer until its command
//     completes, a cancelled one included); GetManyInto appends each value
//     to the caller's buffer, so a batch of sized reads into buffers of
//     the right size allocates only its bookkeeping (TestRecBufClasses,
//     TestGetManyIntoAllocs).
//   - K16: every 16-byte device key a KV writes holds a record header
//     (one user key): a chunk's device key is the first 15 bytes
//     (ChunkKeyBytes) of ChunkKeyIn, and the header says so (byte 5 bit
//     1, beside the chunk set in bit 0). Get, Delete, a Put's cleanup of
//     the record it replaces and the sweep (K13) follow each header's
//     flag, so a record written before (flag clear: 16-byte chunk keys)
//     still reads, and a Put over it or a Delete of it removes its chunks;
//     UserKeys is the namespace's count of 16-byte device keys when it
//     keeps one (KeyCounter: emu, logstore E31) and the hasher is
//     DefaultHasher, else not ok (emu TestOldFormatChunkedRecord: an
//     old-format record written by hand reads, is replaced and deleted
//     whole, and UserKeys follows; TestKVModel with a weak hasher:
//     records of the new format read, overwrite and delete).
//   - K17: ScanUserKeys(from, n) gives each user key whose header's
//     device key has a tag in [from, next) once, with its Meta, when the
//     namespace walks tags (TagScanner: emu, logstore E32, E33) and the
//     hasher is DefaultHasher, else errors.ErrUnsupported; it reads each
//     header's first HeaderBytes+MaxKeyBytes bytes and skips what is not
//     a header of the key its device key hashes (a chunk of a record
//     written before K16, a bad magic). A walk from 0 resumed at each
//     next returns the live keys exactly once, UserKeys their number
//     (emu TestScanUserKeysModel: random puts of inline, extent-sized and
//     chunked values, overwrites and deletes against a map, walks with
//     random n, after reopens by checkpoint and by scan, with 32-bit and
//     3-bit tags; TestScanUserKeysDuringMoves; TestScanUserKeysUnsupported).
//   - K18: MayHold and ValueLenHint answer from the namespace's index in
//     memory (emu MayHold, ValueLen; a KV SSD: unknown, so "may hold"):
//     a key the index has no entry of is not found, and an inline or
//     extent record's value length is its value's, at most 15 bytes
//     more, so GetSized reads it in one round trip (emu TestValueLenHint).
//   - K19: TagOf depends on every byte of the device key and spreads keys
//     over its 32 bits: flipping any one byte changes the tag, and 200,000
//     random keys share tags about as often as 2^-32 a pair predicts
//     (TestTagOf).
//   - K20: ListUserKeys walks any namespace with List and a header
//     Retrieve per 16-byte device key: a walk from nil resumed at each
//     next gives every user key live throughout it once, with its Meta,
//     and skips chunks and the 8-byte keys of the layers above; keys
//     deleted behind the walk do not disturb it (TestListUserKeys).
//   - K21: a value Put with pieces (Item.Pieces) is a pieced record: its
//     header, key and piece table (each piece's length, CRC32C and the
//     writer's meta, the table under a CRC32C of its own in header bytes
//     52-55, byte 5 bit 2 set) and one chunk a piece in the other chunk
//     set (K11); a whole Get reads every piece in one submission and
//     checks the whole CRC32C, GetPieces reads the table and only the
//     pieces its caller chooses, each checked against its own; a changed
//     piece is ErrUnrecovered, and a record that is not pieced has bytes
//     52-55 zero (emu TestPiecedRecords, FuzzRecordDecode).
//   - K22: an item PutMany'd with Replaces reads the record it replaces
//     even when its own value is inline, and deletes that record's chunks
//     (plain or pieced) once its header is written, as a chunked put does
//     (K11): the key then takes its header alone (emu
//     TestInlinePutReplacingChunksDeletesThem). coldstore sets it for every
//     put of a strict store (writethrough, where an overwrite's put
//     replaces the copy in place; tier TestWriteThroughShrinkLeavesNoChunks).
//
// # Caveats
//
//   - Buffers passed in Op.Buf are pinned by the namespace until completion;
//     the caller must not touch them before Do returns.
//   - Collisions are misses: two user keys with the same device key evict
//     each other (the later Put wins); orphaned chunks of a collided record,
//     or of a chunked record overwritten by an inline one without
//     Item.Replaces (K22) stay on the device until reclaimed or
//     overwritten; those of a Put cut short go at the next put of the key
//     that writes or replaces chunks (K13).
//     Until then a chunk of a record written before K16 (a 16-byte key)
//     counts in UserKeys as a user key; so does an expired record.
//   - Get does not lock: a Get racing a Put of the same key can see the new
//     header with old chunks; the put ID turns that into a miss, never a mix.
//   - The List buffer layout and Retrieve's DW0 come from implementations
//     (AirMettle, IBM rocm-xio), not the spec text; ParseList accepts both
//     padding styles. Store option bit 2 is COMPRESS (1.0c) or NOCOMP (1.3):
//     it is never set.
//   - KV.Close closes the namespace.
package nvmekv
