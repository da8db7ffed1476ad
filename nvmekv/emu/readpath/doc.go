// Package readpath is the read path of an emulated KV namespace (package
// nvmekv/emu): it reads from the device the records of the Retrieves the
// command interpreter could not serve from DRAM, in waves on the lanes of
// the namespace's rings (package nvmekv/emu/rings), through the read slots
// of a registered slab or straight into the caller's buffer, and checks
// what it read against the log (package nvmekv/emu/logstore): a record
// that moved while it was read is retried, never served.
//
// The invariant numbers are the namespace's (E, nvmekv/emu/doc.go lists
// every part's); a test marked emu, or not found here, lives in package
// nvmekv/emu and checks the invariant through the whole namespace.
//
// # Invariants
//
//   - E2: an inline record is served only if its magic, region sequence
//     number, key and CRC32C match; otherwise the read is retried (the
//     region was reclaimed meanwhile) or fails with Unrecovered Error (SC
//     0x88), or, for a sound record of another key (the index found it by
//     a tag the two keys share, logstore E30), answers Key Does Not Exist
//     (FuzzWalkRegion, TestConcurrent; logstore TestTagCollisionModel). An extent value is served
//     from a read of the extent alone: no header and no CRC are checked on
//     that path; it is served only if its region was not reclaimed between
//     the index lookup and the read's completion (a reclaim bumps a counter
//     before anything new is written into the region; a read that sees it
//     moved checks its region's sequence number), otherwise the Retrieve
//     runs again from the lookup (after 3 tries: SC 0x88)
//     (TestExtentReadRacesReclaim, TestConcurrentExtents). An extent's
//     CRC32C (header ‖ value) is checked wherever records are walked: the
//     scan at Open, Cache-mode reclaim and Strict-mode evacuation
//     (logstore E4). nvmekv.KV checks its
//     own CRC32C over its header and value end to end, so a KV Get still
//     detects corruption.
//   - E9: a Do with any number of ops completes, and so do any number of
//     concurrent Dos: disk reads go in waves of at most min(ReadSlots, the
//     ring's largest group), each wave takes its read slots all at once
//     (first come, first served) and returns them before the next, so no
//     caller holds slots while waiting for more; Limits().MaxBatch is 0
//     (unlimited) (TestGetManyLarge, TestDoManyRetrieves,
//     TestConcurrentBatches, TestSlotsAllOrNothing).
//   - E10: a Retrieve of a value in an extent is one disk read of the value
//     rounded up to the read alignment (4096 bytes for a 4 KiB value), or of
//     its prefix that the buffer takes (emu TestRetrieve4KOneRead).
//   - E13: an extent read that fills the Retrieve's buffer exactly (the
//     value, or the part the buffer takes, is a whole number of 4096-byte
//     blocks) into a buffer aligned for O_DIRECT goes straight into that
//     buffer (no read slot, no copy); otherwise through a read slot. Either
//     way no byte of the buffer past the value is written
//     (TestDirectExtentRead; Stats.DirectReads counts them).
//   - E24: the read path pins only its slab: Slots read slots of 8 KiB
//     (SlotBytes), registered with the rings; a read that fits one (a
//     record of up to about 7.5 KB, a 4 KiB value with nvmekv.KV's header)
//     takes a slot, a larger one a pooled buffer of the Go heap of its
//     power-of-two size class (16 KiB to 4 MiB; page-aligned, never moved,
//     held by its wave until the read completed, returned after it and
//     freed by the collector when idle), a larger one still a temporary
//     mapping; a read straight into the caller's buffer takes none (E13)
//     (emu TestReadBuffersBySize; Counters.HeapReads counts the heap's).
//
// # Caveats
//
//   - A Retrieve that fails may leave any bytes in the part of its buffer
//     the value would have filled (a direct extent read that raced a
//     reclaim three times, or an I/O error mid-read).
//   - A value that does not qualify for an extent (e.g. 4150 bytes, or any
//     value under 3545 bytes) is read with its record rounded out to the
//     O_DIRECT alignment, header and CRC checked. Extent values are not
//     CRC-checked on the read path (E2); a raw Namespace user that needs
//     end-to-end checks must carry its own checksum (nvmekv.KV does).
//   - Reads already submitted are waited for, not cancelled (file reads
//     complete promptly); the context is checked before each wave.
//   - Heap buffers (E24) are not registered, so a read larger than a slot
//     does not use IORING_URING_CMD_FIXED, and while it is in flight its
//     buffer counts in the Go heap.
package readpath
