// Package dram stores the values of tiercache's DRAM tiers off the Go heap:
// a Log is one numa.Arena (plain memory for hot, a CXL memory node for
// warm) split into equal segments, written as a log. Alloc appends a record
// of n bytes — the value alone: keys, versions and expiries stay in the
// tier's directory — to the open segment and notes its owner; Free marks a
// record dead; a sealed segment whose records are all dead is free again.
// The Log decides nothing: which segment to clean (Oldest, Sparsest) and
// where its live records go is the tier's choice, which moves each record
// it still owns (BeginClean, then Alloc, copy, Free) and ends the cleaning
// (EndClean). A Log is not safe for concurrent use: its owner serializes
// every call except reads of record bytes (Bytes), which may run beside
// them for any record not yet freed.
//
// # Invariants
//
//   - A1: the arena holds no Go pointers (values only), and a segment's
//     owners are on the Go heap beside it, so the collector never scans
//     value bytes and always sees every owner
//     (TestOwnersListTheSegmentsRecords).
//   - A2: a record's bytes are never handed out again while it is live:
//     Alloc only writes into the open segment past its end, and a segment
//     is reused only once it is sealed, every record in it is freed and no
//     cleaning of it is under way (TestRecordsNeverOverlap, a model test
//     against a map of live records).
//   - A3: Live is the sum of the live records' lengths, and Used − Live
//     the dead bytes a cleaning could take back (the model test).
//   - A4: a record of up to SegmentBytes bytes is always placed when a
//     segment is free (TestAllocFillsEverySegment); Alloc never returns
//     less than it was asked for.
//   - A5: Oldest returns sealed segments in the order they were opened,
//     and Sparsest the sealed segment with the fewest live bytes
//     (TestCleaningOrder).
//   - A6: Close unmaps the arena once; every call after it fails or
//     returns nothing (TestCloseIsFinal).
//   - A7: a withheld segment takes no record until it is returned, and
//     its pages are given back to the kernel when it is withheld; Withhold
//     never takes one of the keep free segments (TestWithheldSegments).
//
// # Caveats
//
// Bytes returns a slice of the arena: it stays valid while the record is
// live, and the caller must not keep it past the Free (the tier reads
// values under its directory lock, and frees a record only under that
// lock). A record is not aligned: values are copied, never read as
// structs.
package dram
