package value

import (
	"encoding/binary"
	"math/rand/v2"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// Table maps byte strings (keys) to byte strings (values) in place: the
// large hashes' fields, the large sets' members (with empty values), the
// sorted sets' member index. Its entries are packed, in the order they
// were written, into chunks of ChunkBytes (a larger entry has a chunk of
// its own), each as a flag byte (live or dead), then the key and the
// value as a record holds them (a uvarint length and the bytes each), so
// a record's body is the live entries copied in order; an open-addressing
// index of 8-byte slots (a slot: 32 bits of the key's hash, and the
// entry's place) finds a key with a probe or two. A value set again of
// its length is written in place; one of another length goes to the end,
// its old entry dead; dead entries are taken back by compaction once they
// hold as many bytes as the live ones. Nothing in it is a Go pointer but
// the chunks, so the collector scans a handful of words however large the
// table. A Table is not safe for concurrent use; concurrent readers are
// fine.
type Table struct {
	chunks [][]byte // packed entries; the last is being filled
	slots  []uint64 // the index: hash<<32 | ref+1, 0 for empty; a power of two
	n      int      // live entries
	body   int      // the live entries' bytes without their flags: a record's body
	dead   int      // the dead entries' bytes, flags included
	heap   int64    // chunks and index
	// manual: the owner compacts (Waste, then a new table), for it keeps
	// refs to the entries, which a compaction moves (a sorted set's order).
	manual bool
}

// ChunkBytes is the size of a Table's chunks.
const ChunkBytes = 16 << 10

const (
	chunkShift = 14 // ChunkBytes = 1 << chunkShift
	maxChunks  = 1<<(32-chunkShift) - 1
	flagLive   = 1
	flagDead   = 2
)

var tableBytes = int64(AllocSize(int(unsafe.Sizeof(Table{}))))

// Len is the number of keys.
func (t *Table) Len() int { return t.n }

// BodySize is the bytes of the live entries as a record's body holds them.
func (t *Table) BodySize() int { return t.body }

// HeapBytes is the heap t takes, its own struct included (a Table
// allocated on its own).
func (t *Table) HeapBytes() int64 { return tableBytes + t.HeldBytes() }

// HeldBytes is the heap t's chunks and index take, its own struct not
// included: what a Table embedded in another struct adds to that struct's
// allocation.
func (t *Table) HeldBytes() int64 {
	return t.heap + int64(AllocSize(cap(t.chunks)*int(unsafe.Sizeof([]byte(nil)))))
}

// EntrySize is the bytes key and value take in a record's body.
func EntrySize(key, val []byte) int {
	return UvarintLen(len(key)) + len(key) + UvarintLen(len(val)) + len(val)
}

// UvarintLen is the length of n as a uvarint (encoding/binary).
func UvarintLen(n int) int { return UvarintLen64(uint64(n)) }

func keyHash(key []byte) uint32 { return uint32(xxh3.Hash(key) >> 32) }

// at reads the entry at offset p of chunk c: its flag, the offsets of
// its key and value, and where it ends.
func at(c []byte, p int) (flag byte, ks, ke, vs, end int) {
	kl, w := binary.Uvarint(c[p+1:])
	ks = p + 1 + w
	ke = ks + int(kl)
	vl, w2 := binary.Uvarint(c[ke:])
	vs = ke + w2
	return c[p], ks, ke, vs, vs + int(vl)
}

// entry reads the entry at ref: its flag, key, value, and its bytes.
func (t *Table) entry(ref uint32) (flag byte, key, val []byte, size int) {
	c := t.chunks[ref>>chunkShift]
	p := int(ref & (1<<chunkShift - 1))
	flag, ks, ke, vs, end := at(c, p)
	return flag, c[ks:ke], c[vs:end], end - p
}

// find is key's slot in the index and its entry's ref, or the empty slot
// where it would go (found false).
func (t *Table) find(key []byte, h uint32) (slot int, ref uint32, found bool) {
	if len(t.slots) == 0 {
		return -1, 0, false
	}
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return i, 0, false
		}
		if uint32(s>>32) == h {
			r := uint32(s) - 1
			if _, k, _, _ := t.entry(r); string(k) == string(key) {
				return i, r, true
			}
		}
	}
}

// Get is key's value (aliasing t until its next change).
func (t *Table) Get(key []byte) ([]byte, bool) {
	_, ref, ok := t.find(key, keyHash(key))
	if !ok {
		return nil, false
	}
	_, _, v, _ := t.entry(ref)
	return v, true
}

// Has reports whether key is in t.
func (t *Table) Has(key []byte) bool {
	_, _, ok := t.find(key, keyHash(key))
	return ok
}

// Put sets key's value and reports whether key is new.
func (t *Table) Put(key, val []byte) (added bool) {
	h := keyHash(key)
	slot, ref, found := t.find(key, h)
	if found {
		_, _, old, size := t.entry(ref)
		if len(old) == len(val) {
			copy(old, val)
			return false
		}
		t.kill(ref, size, EntrySize(key, old))
		t.slots[slot] = uint64(h)<<32 | uint64(t.append(key, val)) + 1
		t.maybeCompact()
		return false
	}
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resize(max(2*len(t.slots), 8))
		slot, _, _ = t.find(key, h)
	}
	t.slots[slot] = uint64(h)<<32 | uint64(t.append(key, val)) + 1
	t.n++
	return true
}

// Delete removes key and reports whether it was there.
func (t *Table) Delete(key []byte) bool {
	slot, ref, found := t.find(key, keyHash(key))
	if !found {
		return false
	}
	_, k, v, size := t.entry(ref)
	t.kill(ref, size, EntrySize(k, v))
	t.n--
	t.unslot(slot)
	t.maybeCompact()
	return true
}

// kill marks the entry at ref dead.
func (t *Table) kill(ref uint32, size, body int) {
	t.chunks[ref>>chunkShift][ref&(1<<chunkShift-1)] = flagDead
	t.body -= body
	t.dead += size
}

// unslot empties slot i of the index, shifting back the entries of its
// probe run that belong before it (linear probing needs no tombstones).
func (t *Table) unslot(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		home := int(t.slots[j]>>32) & mask
		// Move slot j to i if its home is not in (i, j] cyclically.
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = 0
}

// append packs a live entry at the end and returns its ref.
func (t *Table) append(key, val []byte) uint32 {
	size := 1 + EntrySize(key, val)
	last := len(t.chunks) - 1
	switch {
	case last >= 0 && len(t.chunks[last])+size <= cap(t.chunks[last]) && len(t.chunks[last]) < ChunkBytes:
	case last >= 0 && len(t.chunks[last])+size <= ChunkBytes:
		// The last chunk grows, twice as large up to ChunkBytes: a small
		// table takes little. Its entries keep their offsets.
		old := t.chunks[last]
		b := append(make([]byte, 0, min(max(2*cap(old), len(old)+size), ChunkBytes)), old...)
		t.heap += int64(AllocSize(cap(b)) - AllocSize(cap(old)))
		t.chunks[last] = b
	default:
		c := size
		if size <= ChunkBytes {
			c = 64
			if last >= 0 {
				c = ChunkBytes // a table past its first chunk grows by whole ones
			}
		}
		b := make([]byte, 0, max(c, size))
		t.heap += int64(AllocSize(cap(b)))
		t.chunks = append(t.chunks, b)
		last++
		if len(t.chunks) > maxChunks {
			panic("value: a table past its chunks")
		}
	}
	c := t.chunks[last]
	ref := uint32(last)<<chunkShift | uint32(len(c))
	c = append(c, flagLive)
	c = binary.AppendUvarint(c, uint64(len(key)))
	c = append(c, key...)
	c = binary.AppendUvarint(c, uint64(len(val)))
	c = append(c, val...)
	t.chunks[last] = c
	t.body += size - 1
	return ref
}

// resize rebuilds the index with n slots.
func (t *Table) resize(n int) {
	old := t.slots
	t.heap += int64(AllocSize(8*n) - AllocSize(8*len(old)))
	t.slots = make([]uint64, n)
	mask := n - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := int(s>>32) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// maybeCompact packs the live entries again once the dead ones take as
// many bytes, and a chunk's worth (Waste says so), unless Manual.
func (t *Table) maybeCompact() {
	if t.manual || !t.Waste() {
		return
	}
	old := t.chunks
	t.chunks, t.body, t.dead = nil, 0, 0
	for _, c := range old {
		t.heap -= int64(AllocSize(cap(c)))
	}
	clear(t.slots)
	n := t.n
	t.n = 0
	for _, c := range old {
		for p := 0; p < len(c); {
			flag, ks, ke, vs, end := at(c, p)
			if flag == flagLive {
				key := c[ks:ke]
				h := keyHash(key)
				slot, _, _ := t.find(key, h)
				t.slots[slot] = uint64(h)<<32 | uint64(t.append(key, c[vs:end])) + 1
				t.n++
			}
			p = end
		}
	}
	if t.n != n {
		panic("value: a table lost entries compacting")
	}
	if len(t.slots) > 16 && t.n*8 < len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
}

// Waste reports whether the dead entries hold as many bytes as the live
// ones, and a chunk's worth: a compaction would halve the chunks at least.
func (t *Table) Waste() bool { return t.dead >= ChunkBytes && t.dead >= t.body }

// Manual makes t's owner compact it (t never moves an entry by itself):
// an owner that keeps refs (Ref, Insert) calls it first.
func (t *Table) Manual() { t.manual = true }

// Ref is the place of key's entry, for At and SetValue; it stays until
// the entry is deleted or its value set again with another length, or t
// compacts (never, once Manual).
func (t *Table) Ref(key []byte) (uint32, bool) {
	_, ref, ok := t.find(key, keyHash(key))
	return ref, ok
}

// At is the key and value of the entry at ref (aliasing t).
func (t *Table) At(ref uint32) (key, val []byte) {
	_, k, v, _ := t.entry(ref)
	return k, v
}

// Insert adds key, which t does not hold, with val, and returns its ref.
func (t *Table) Insert(key, val []byte) uint32 {
	h := keyHash(key)
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resize(max(2*len(t.slots), 8))
	}
	slot, _, _ := t.find(key, h)
	ref := t.append(key, val)
	t.slots[slot] = uint64(h)<<32 | uint64(ref) + 1
	t.n++
	return ref
}

// Each calls f with every key and value in the order they were written
// (a value set again with another length counts as written then), until
// f returns false; they alias t until its next change.
func (t *Table) Each(f func(key, val []byte) bool) {
	for _, c := range t.chunks {
		for p := 0; p < len(c); {
			flag, ks, ke, vs, end := at(c, p)
			if flag == flagLive && !f(c[ks:ke], c[vs:end]) {
				return
			}
			p = end
		}
	}
}

// AppendBody appends the live entries as a record's body holds them (each
// key and value with its length), in Each's order.
func (t *Table) AppendBody(dst []byte) []byte {
	for _, c := range t.chunks {
		for p := 0; p < len(c); {
			flag, _, _, _, end := at(c, p)
			if flag == flagLive {
				dst = append(dst, c[p+1:end]...)
			}
			p = end
		}
	}
	return dst
}

// Random is a key and its value picked uniformly at random (t not empty):
// random slots of the index until one is in use (the index is at least an
// eighth full after a compaction, three eighths after a growth), then,
// after 64 misses, the next one in use.
func (t *Table) Random() (key, val []byte) {
	mask := len(t.slots) - 1
	i := rand.IntN(len(t.slots))
	for try := 0; t.slots[i] == 0; try++ {
		if try < 64 {
			i = rand.IntN(len(t.slots))
		} else {
			i = (i + 1) & mask
		}
	}
	_, k, v, _ := t.entry(uint32(t.slots[i]) - 1)
	return k, v
}
