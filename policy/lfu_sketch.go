package policy

import "math/bits"

// freqSketch is the LFU's frequency sketch: a count-min sketch of 4-bit
// counters with four hash functions, each item's four counters in one
// 64-byte block (one cache line), as Caffeine's FrequencySketch lays it out
// (Einziger et al., TinyLFU, ACM TOS 2017 §3; the blocked layout from
// Caffeine's design notes). After sampleSize counted increments every
// counter is halved (TinyLFU's reset), so old popularity decays. Not safe
// for concurrent use: the LFU's owner serializes it.
type freqSketch struct {
	table      []uint64 // 8 words (16 counters each) a block
	blockMask  uint64
	sampleSize int64
	size       int64  // increments since the last reset, less what resets took back
	items      int    // the item count the table was sized for
	epoch      uint16 // resets (and new tables) so far, wrapping
}

// ensure sizes the sketch for items counters' words (at least 64; the LFU
// asks for two 64-bit words, 32 counters, per resident item, twice what
// Caffeine's FrequencySketch gives, which keeps small caches' estimates
// apart), rounded up to a power of two, keeping the table if it is that
// large already. The sample is sampleFactor × items increments. A larger
// table repeats the old one (grow): every estimate stays what it was.
func (s *freqSketch) ensure(items, sampleFactor int) {
	items = max(items, 64)
	if items <= s.items {
		return
	}
	words := 1 << bits.Len64(uint64(items-1)) // a power of two ≥ items
	s.items = words
	s.sampleSize = int64(sampleFactor) * int64(words)
	if words == len(s.table) {
		return
	}
	if s.table != nil {
		s.grow(words)
		return
	}
	s.table = make([]uint64, words)
	s.epoch++
	s.blockMask = uint64(words/8 - 1)
	s.size = 0
}

// grow makes the table words long (a multiple of its length), each old
// block copied to every new block its hashes may now fall in: a hash's
// block index (slots) takes more of its low bits, the same ones and
// more, and its counters within the block the same high bits, so block
// b of the old table is block b + k × (old blocks) of the new one for
// every k, and every estimate, the sample's count and the saturated
// marks of the epoch stay as they were.
func (s *freqSketch) grow(words int) {
	t := make([]uint64, words)
	for off := 0; off < words; off += len(s.table) {
		copy(t[off:], s.table)
	}
	s.table = t
	s.blockMask = uint64(words/8 - 1)
}

// spread mixes a 64-bit hash once more, so that the block index and the
// counter indexes use independent bits even when the caller's hash is weak
// in its low bits.
func spread(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// slots returns the block's first word and, for each of the four
// counters, the word offset and the nibble in it.
func (s *freqSketch) slots(h uint64) (block uint64, word [4]uint64, nib [4]uint64) {
	h = spread(h)
	block = (h & s.blockMask) << 3
	c := h >> 32
	for i := range 4 {
		x := c >> (i * 8)
		word[i] = block + uint64(i)*2 + x&1 // two words per counter row
		nib[i] = (x >> 1) & 15
	}
	return block, word, nib
}

// frequency is the estimate of h's count: the smallest of its counters.
func (s *freqSketch) frequency(h uint64) int {
	if s.table == nil {
		return 0
	}
	_, word, nib := s.slots(h)
	f := uint64(15)
	for i := range 4 {
		f = min(f, (s.table[word[i]]>>(nib[i]<<2))&15)
	}
	return int(f)
}

// increment counts one occurrence of h: conservative update, raising only
// the counters at the minimum (Estan, Varghese, SIGCOMM 2002), which makes
// the estimate of a rare key less inflated by its neighbours. It reports
// whether h's estimate is at the maximum (15) afterwards.
func (s *freqSketch) increment(h uint64) (saturated bool) {
	if s.table == nil {
		return false
	}
	_, word, nib := s.slots(h)
	var c [4]uint64
	low := uint64(15)
	for i := range 4 {
		c[i] = (s.table[word[i]] >> (nib[i] << 2)) & 15
		low = min(low, c[i])
	}
	if low == 15 {
		return true
	}
	for i := range 4 {
		if c[i] == low {
			s.table[word[i]] += 1 << (nib[i] << 2)
		}
	}
	if s.size++; s.size >= s.sampleSize {
		s.reset()
		return false
	}
	return low == 14
}

// reset halves every counter.
func (s *freqSketch) reset() {
	s.epoch++
	odd := 0
	for i, w := range s.table {
		odd += bits.OnesCount64(w & 0x1111111111111111)
		s.table[i] = (w >> 1) & 0x7777777777777777
	}
	s.size = (s.size - int64(odd)/4) / 2
}
