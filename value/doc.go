// Package value is the root of the value encodings: one package per kind
// of aggregate value (value/hash, value/list, value/set, value/zset), and
// value/hll, Redis's HyperLogLog string layout. Each
// is plain code, with no server and no tier import: it defines the record
// a value is stored as in every tier, the structure the DRAM tiers keep
// live and change in place (a tier.Live, whose interface it satisfies
// without importing tier), and the operations of its commands as
// redis-server does them, and is tested on its own. The server gives each
// kind its tier.Kind and edits or reads it through tier.Cache.Edit and
// Read (docs/DESIGN.md, "Data types").
//
// This package itself measures the heap a live structure takes:
// AllocSize is an allocation's size as the runtime rounds it, read off
// the runtime when the package loads (V1: TestAllocSizeIsWhatTheHeapTakes);
// and holds the table the large hashes and sets and the sorted sets'
// member index share: Table, byte strings to byte strings in place (V2:
// TestTableModel; V3, its HeapBytes within 2% of the heap's growth:
// TestTableHeapBytes); and Uvarint, which refuses a uvarint written with more
// bytes than it needs, so a record decoded with it encodes back to the same
// bytes (V4: TestUvarintRefusesLongForms).
//
// It also reads and writes the payloads of DUMP and RESTORE, one value in
// Redis 7.0's RDB encoding (dump.go): DecodeDump reads every encoding
// redis-server 7.0's DUMP writes (and the ziplists of Redis 3.2 to 6.2's
// that 7.0's RESTORE still reads), and any input gives a value or an
// error, never a panic, nor an allocation past its DumpLimits, and what it
// reads EncodeDump writes back to a payload that reads the same (V5:
// TestDecodeRedisPayloads, TestDumpRoundTrip, TestDumpRefusals,
// FuzzDecodeDump).
//
// Each package's invariants have its own prefix: VH for value/hash, VL
// for value/list, VS for value/set, VZ for value/zset, VP for value/hll
// (the PF commands' HyperLogLog strings, which are strings, not a kind).
package value
