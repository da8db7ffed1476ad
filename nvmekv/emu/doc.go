// Package emu is the emulated NVMe KV namespace: an in-process controller
// that executes the same 64-byte KV commands as a KV SSD, with the same
// status codes, on a device of package dev: a regular file or a block
// device through io_uring read/write (O_DIRECT, 4096-byte aligned,
// registered buffers), or an ordinary NVMe namespace through NVM
// passthrough (Options.NVMe: NVM Read/Write as uring_cmd on /dev/ngXnY,
// Flush, Dataset Management for reclaimed regions). It is tiercache's
// default cold store.
//
// This package is the command interpreter (exec.go: Do, the 64-byte
// encoding, statuses, List, Identify) and what opens and closes the
// parts below it, each a package with its own invariants; dependencies
// point down only:
//
//	emu        the interpreter: Namespace, Options, Stats      E1, E12, E26
//	readpath   the read path: waves, read slots, direct reads,
//	           the read-side record checks and retries          E2, E9, E10, E13, E24
//	logstore   the log: regions, records, extents, the index,
//	           flush, reclaim, Strict evacuation, recovery,
//	           the undo journal, the checkpoint, Open's
//	           progress reports, the index's placement hook     E3-E8, E11, E14, E18, E20-E22, E25, E27-E37
//	rings      the io_uring rings and registered buffers that
//	           carry every transfer to the device               E15-E17, E19, E23
//	dev        the I/O backend: File, NVMe, Fault               D1-D7
//
// The interpreter takes the log's lock for a whole batch (read-locked for
// a batch of only Retrieves and Exists), executes each command's bytes
// against the log, and hands the Retrieves whose records are not in DRAM
// to the read path after unlocking; a Retrieve whose record moved while
// it was read runs again from its lookup.
//
// The log's index keeps a 32-bit tag of an inline record's key, not the
// key (logstore E8, E30): a Retrieve reads the record it finds and
// answers Key Does Not Exist if the record names another key; Exist, and
// a Store or Delete of a key whose tag is in the index, check the
// record's header first (a synchronous read of 512..4096 bytes for a
// record no longer in a write buffer, under the lock); List reads every
// region holding a live inline record to learn their keys. The number
// of live 16-byte keys is kept (FullKeyItems, logstore E31: nvmekv.KV's
// headers, K16), and ScanTags walks the live records of a range of tags,
// in tag order, reading each one's key and value prefix (E32, E33): the
// nvmekv.KeyCounter and nvmekv.TagScanner that KV.UserKeys and
// KV.ScanUserKeys use.
//
// Durability: a Store or Delete is durable once a Flush (Namespace.Flush,
// KV.Sync) that started after it returned nil, or when Options.SyncWrites
// is set, once its Do returned nil. Close makes everything durable.
// Namespace.Clear deletes every key at once, durably when it returns
// (logstore E34), at a cost that does not grow with the keys; KV.Clear
// uses it (nvmekv K10).
//
// # Invariants
//
//   - E1: every command goes through its 64-byte encoding: Do (and
//     Retrieve, Store and Delete, each a Do of one Op) encodes each Op with
//     nvmekv, executes the bytes, and decodes the completion with
//     nvmekv.DecodeResult (TestControllerStatus).
//
//   - E12: a Retrieve that succeeds (Namespace.Retrieve, or a Do of
//     Retrieves) allocates nothing once warm, whether it reads the file or a
//     write buffer; a batch of only Retrieves and Exists looks its keys up
//     under the namespace lock read-locked (concurrently with other
//     lookups), every other batch holds it exclusively (TestRetrieveAllocs;
//     TestConcurrent and TestExtentReadRacesReclaim under -race).
//
//   - E26: a Do lets go of the log's lock for a moment after each MiB it
//     stored, so one batch of big Stores (a big value's chunks) does not
//     hold up other callers' lookups and Stores for its whole length;
//     Link chains are kept (TestBigBatchLetsOthersIn).
//
// The other invariants are stated, with their tests, in the package that
// holds them (the table above); many of their tests live here because
// they check the invariant through the whole namespace.
//
// # Caveats
//
//   - Each namespace locks one OS thread for its main ring's owner
//     goroutine (SINGLE_ISSUER|DEFER_TASKRUN, rings) and has a second,
//     plain ring for lone reads (E15); on a kernel without those flags it
//     uses one plain ring. A third, plain ring serves large batches of
//     reads (E16): while a batch runs there, its caller's thread waits in
//     io_uring_enter. Options.SQPoll gives the main ring an SQPOLL thread,
//     which excludes SINGLE_ISSUER|DEFER_TASKRUN and so the quick ring.
//   - A Retrieve chained (Link) before other ops does not stop them if its
//     disk read fails: disk reads run after the rest of the batch.
//   - A Do's context is checked before each wave of disk reads; reads already
//     submitted are waited for, not cancelled (file reads complete promptly),
//     and the rest of the batch fails with the context's error.
//   - The extent rule (logstore) sees the device value: nvmekv.KV stores a
//     56-byte header and the key before the user's value, so a 4 KiB user
//     value (≈ 4170 device bytes) stays inline (a 4608-byte read); user
//     values of about 3490..4040 bytes (device 3545..4096) get an extent.
//   - Strict mode copies live data forward; the checkpoint is a side file
//     that block devices and NVMe namespaces lack by default (they are
//     scanned at every Open); keys equal after zero padding share an index
//     slot (logstore's caveats).
package emu
