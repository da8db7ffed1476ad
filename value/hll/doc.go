// Package hll is Redis's HyperLogLog as a string: the bytes PFADD,
// PFCOUNT and PFMERGE store and read, in the layout redis-server 7.0
// gives them (hyperloglog.c's header comment documents it), so that a
// HyperLogLog made here reads the same in redis-server and the other way
// round. Plain code, no server or tier import.
//
// A HyperLogLog is a 16-byte header ("HYLL", an encoding byte, three
// unused bytes, the cached cardinality as 8 bytes little endian whose top
// bit marks it stale) and 16384 registers, either dense (6 bits each,
// 12288 bytes) or sparse (a run length code of ZERO, XZERO and VAL
// opcodes). An element is hashed with MurmurHash64A and Redis's seed: the
// low 14 bits pick a register, the run of zeros above them sets its value
// (murmur.go). A sparse string turns dense when a register passes 32 or
// the string would pass hll-sparse-max-bytes (sparse.go). PFCOUNT's
// number is Otmar Ertl's improved estimator as Redis 7.0 computes it
// (estimate.go).
//
// # Invariants
//
//   - VP1: Add, Count, Registers.Merge, Registers.Count and
//     Registers.Store give the bytes and numbers redis-server 7.0 gives:
//     a sparse and a dense string and their counts recorded from it are
//     rebuilt byte for byte (TestRedisBytes); the server's differential
//     test compares every reply and string against a live redis-server
//     (server S61).
//   - VP2: no byte string makes any function here panic or read outside
//     its slice; a string that is not a HyperLogLog is ErrNotHLL, a
//     sparse one whose opcodes do not cover exactly the 16384 registers
//     is ErrCorrupt wherever the registers are all read (TestCorruptTable,
//     FuzzDecode).
//   - VP3: the sparse and the dense encodings of the same registers count
//     the same, and a sparse string turns dense exactly when a register
//     passes 32 or it would grow past the sparse limit, which it never
//     does (TestSparseDenseAgree, TestPromotion).
//   - VP4: no function changes the string it is given: what changes is a
//     copy it returns (TestInputUntouched).
//
// # Caveats
//
//   - Redis reads an XZERO opcode that is a sparse string's last byte
//     with its string's terminator as second byte, which a split of such
//     an XZERO overwrites with its sequence's last byte. Within one Add or
//     Store that byte is kept past the buffer's length as Redis keeps it
//     (at, terminate); a stored string has none, so a later command reads
//     0 there where Redis may read the stray byte its string kept.
//   - Add answers ErrCorrupt and changes nothing when an element's
//     register is not covered; Redis keeps the registers it raised for
//     the elements before it (the server's rule: a refused command
//     changes nothing).
package hll
