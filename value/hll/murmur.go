package hll

import "encoding/binary"

// murmurSeed is the seed Redis hashes PFADD's elements with
// (hyperloglog.c, hllPatLen: MurmurHash64A(ele, elesize, 0xadc83b19)).
const murmurSeed = 0xadc83b19

// murmur64A is MurmurHash2's 64-bit variant (Austin Appleby's
// MurmurHash64A, public domain) in the endian-neutral form Redis uses:
// 8-byte blocks read little endian, m = 0xc6a4a7935bd1e995, r = 47, the
// tail's bytes folded in little endian (hyperloglog.c, MurmurHash64A).
func murmur64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	blocks := len(key) &^ 7
	for i := 0; i < blocks; i += 8 {
		k := binary.LittleEndian.Uint64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	if tail := key[blocks:]; len(tail) > 0 {
		for i := len(tail) - 1; i >= 0; i-- {
			h ^= uint64(tail[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// patLen is the register an element goes to and the length of the
// "000...1" pattern its hash starts with past the index bits, 1 to
// q+1 (hyperloglog.c, hllPatLen: the low p bits index the register, the
// rest with bit q forced on are scanned from the least significant).
func patLen(elem []byte) (index int, count uint8) {
	hash := murmur64A(elem, murmurSeed)
	index = int(hash & (numRegisters - 1))
	hash >>= precision
	hash |= 1 << q
	count = 1
	for hash&1 == 0 {
		count++
		hash >>= 1
	}
	return index, count
}
