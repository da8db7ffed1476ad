package hll

import "encoding/binary"

// The layout, as hyperloglog.c's header comment documents it (Redis 7.0):
// a 16-byte header, "HYLL", one encoding byte (0 dense, 1 sparse), three
// unused bytes, and the cached cardinality as 8 bytes little endian whose
// most significant bit set means "not valid, recompute"; then the
// registers, dense or sparse.
const (
	HeaderSize = 16
	// precision is Redis's HLL_P: 2^14 registers of 6 bits.
	precision    = 14
	numRegisters = 1 << precision // HLL_REGISTERS, 16384
	q            = 64 - precision // HLL_Q: hash bits left for the pattern
	registerBits = 6              // HLL_BITS
	registerMax  = 1<<registerBits - 1
	// DenseSize is a dense HyperLogLog's exact length (HLL_DENSE_SIZE):
	// the header and 16384 6-bit registers, 12304 bytes.
	DenseSize = HeaderSize + (numRegisters*registerBits+7)/8

	encDense  = 0 // HLL_DENSE
	encSparse = 1 // HLL_SPARSE
	// DefaultSparseMaxBytes is hll-sparse-max-bytes' default (Redis 7.0
	// config.c): a sparse HyperLogLog that would grow past it, header
	// included, becomes dense.
	DefaultSparseMaxBytes = 3000
)

// Check reports whether v is a HyperLogLog string as Redis 7.0's
// isHLLObjectOrReply accepts one: at least a header, "HYLL", encoding 0
// or 1, and a dense one exactly DenseSize bytes. A sparse one is only
// found corrupt when its registers are read (ErrCorrupt).
func Check(v []byte) error {
	if len(v) < HeaderSize || string(v[:4]) != "HYLL" || v[4] > encSparse {
		return ErrNotHLL
	}
	if v[4] == encDense && len(v) != DenseSize {
		return ErrNotHLL
	}
	return nil
}

// IsDense reports whether a checked HyperLogLog is dense.
func IsDense(v []byte) bool { return v[4] == encDense }

// Cached is the cardinality v's header caches, and whether it is valid
// (HLL_VALID_CACHE: the last byte's top bit clear).
func Cached(v []byte) (uint64, bool) {
	if v[15]&0x80 != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(v[8:16]), true
}

// setCached stores card (below 2^63) as the valid cached cardinality.
func setCached(v []byte, card uint64) { binary.LittleEndian.PutUint64(v[8:16], card) }

// invalidate marks the cached cardinality stale (HLL_INVALIDATE_CACHE).
func invalidate(v []byte) { v[15] |= 0x80 }

// New is an empty HyperLogLog as Redis creates one (createHLLObject):
// sparse, a zero header but for "HYLL" and the encoding, and one XZERO
// opcode covering the 16384 registers.
func New() []byte {
	v := make([]byte, HeaderSize+2, HeaderSize+64)
	copy(v, "HYLL")
	v[4] = encSparse
	putXZero(v[HeaderSize:], numRegisters)
	return v
}
