package nvmekv

import "encoding/binary"

// TagOf is the 32-bit tag of device key k (zero-padded to 16 bytes): a mix
// of all 16 bytes, since device keys may be short or structured, not
// hashes. The emulated namespace files an inline record's index entry under
// it and walks its keys in its order (logstore E8, E32), and the tier's
// directory shards its keys by it so that a shard holds one range of tags
// (tier T37). Two keys share a tag with probability 2^-32 (K19).
func TagOf(k *[16]byte) uint32 {
	a, b := binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:])
	return uint32(Mix64(Mix64(a)^b) >> 32)
}

// Mix64 spreads every bit of h over the high half of the result: TagOf's
// mixing step, which the emulated store's key table uses for its home slots
// too.
func Mix64(h uint64) uint64 {
	h *= 0x9e3779b97f4a7c15
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	h ^= h >> 29
	return h
}
