package zset

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"unsafe"

	"github.com/tiercache/tiercache/value"
)

// Sorted is a sorted set as the DRAM tiers keep it live (tier.Live),
// changed in place: a member index (a value.Table of each member and its
// score) and the order, blocks of at most BlockEntries entries (a score
// and the member's place in the index) kept in Redis's order, with a
// Fenwick tree of the blocks' counts; so a member's score is a probe or
// two, and an add, a removal, a rank or the entry of a rank a binary
// search over the blocks, one in a block and O(log blocks) in the tree:
// a B-tree of two levels with a member index, as the issue asks. Its
// record is built only when asked for. It implements ZSet. A Sorted is
// not safe for concurrent use; concurrent readers are fine.
type Sorted struct {
	idx  value.Table // member → score, 8 bytes little-endian; Manual
	blks []zblock    // the entries in Redis's order
	tops []zent      // each block's last entry: the blocks' binary search reads one array
	fen  []int32     // Fenwick tree of the blocks' counts (1-based)
	n    int
	long int   // members longer than SmallMember (Small)
	body int   // the record's body: Σ 8 + the member with its length
	heap int64 // blocks' arrays (blks, tops and fen apart)
}

// BlockEntries is the most entries a block holds; a full one splits in
// two.
const BlockEntries = 128

type zblock struct{ e []zent }

type zent struct {
	score float64
	ref   uint32 // the member's entry in idx
}

var (
	sortedBytes = int64(value.AllocSize(int(unsafe.Sizeof(Sorted{}))))
	entSize     = int(unsafe.Sizeof(zent{}))
	blkSize     = int(unsafe.Sizeof(zblock{}))
)

var _ ZSet = (*Sorted)(nil)

// NewSorted returns an empty sorted set.
func NewSorted() *Sorted {
	z := &Sorted{}
	z.idx.Manual()
	return z
}

// LoadSorted makes a Sorted of a record; it copies what it keeps.
func LoadSorted(rec []byte) (*Sorted, error) {
	var es Entries
	if err := es.Decode(rec); err != nil {
		return nil, err
	}
	z := NewSorted()
	z.fill(es.e)
	return z, nil
}

// fill makes z the entries es, in order (z empty).
func (z *Sorted) fill(es []Entry) {
	for i := 0; i < len(es); {
		k := min(len(es)-i, BlockEntries*3/4)
		b := zblock{e: make([]zent, 0, k)}
		for _, e := range es[i : i+k] {
			b.e = append(b.e, zent{e.Score, z.idx.Insert(e.Member, scoreBytes(e.Score))})
			z.added(e.Member)
		}
		z.heap += int64(value.AllocSize(cap(b.e) * entSize))
		z.blks = append(z.blks, b)
		i += k
	}
	z.rebuild()
}

func scoreBytes(s float64) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(s))
	return b[:]
}

func scoreOf(v []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(v)) }

// added and removed keep the counts of a member added or removed.
func (z *Sorted) added(m []byte) {
	z.n++
	z.body += 8 + value.UvarintLen(len(m)) + len(m)
	if len(m) > SmallMember {
		z.long++
	}
}

func (z *Sorted) removed(m []byte) {
	z.n--
	z.body -= 8 + value.UvarintLen(len(m)) + len(m)
	if len(m) > SmallMember {
		z.long--
	}
}

// Len is the number of members.
func (z *Sorted) Len() int { return z.n }

// Small reports whether z is within SmallMembers and SmallMember.
func (z *Sorted) Small() bool { return z.n <= SmallMembers && z.long == 0 }

// HeapBytes is the heap z takes (value.AllocSize of its allocations).
func (z *Sorted) HeapBytes() int64 {
	return sortedBytes + z.idx.HeldBytes() + z.heap +
		int64(value.AllocSize(cap(z.blks)*blkSize)+value.AllocSize(cap(z.tops)*entSize)+value.AllocSize(4*cap(z.fen)))
}

// Size is the size of z's record.
func (z *Sorted) Size() int { return 1 + value.UvarintLen64(uint64(z.n)) + z.body }

// RecordSize is Size (tier.Live).
func (z *Sorted) RecordSize() int { return z.Size() }

// AppendRecord appends z's record to dst.
func (z *Sorted) AppendRecord(dst []byte) []byte {
	dst = binary.AppendUvarint(append(dst, Version), uint64(z.n))
	for _, b := range z.blks {
		for _, e := range b.e {
			m, _ := z.idx.At(e.ref)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(e.score))
			dst = append(binary.AppendUvarint(dst, uint64(len(m))), m...)
		}
	}
	return dst
}

// Score is member's score.
func (z *Sorted) Score(m []byte) (float64, bool) {
	v, ok := z.idx.Get(m)
	if !ok {
		return 0, false
	}
	return scoreOf(v), true
}

// entry is the Entry of e (its member aliasing z).
func (z *Sorted) entry(e zent) Entry {
	m, _ := z.idx.At(e.ref)
	return Entry{Member: m, Score: e.score}
}

// At is the entry of rank i (0 ≤ i < Len), its member aliasing z.
func (z *Sorted) At(i int) Entry {
	b, j := z.findRank(i)
	return z.entry(z.blks[b].e[j])
}

// EachRank calls f with the entries of ranks [lo, hi) (0 ≤ lo ≤ hi ≤
// Len) in ascending order, or in descending order when rev, their members
// aliasing z: one rank search, then a walk along the blocks.
func (z *Sorted) EachRank(lo, hi int, rev bool, f func(Entry)) {
	if lo >= hi {
		return
	}
	if !rev {
		b, j := z.findRank(lo)
		for n := hi - lo; n > 0; n-- {
			for j == len(z.blks[b].e) {
				b, j = b+1, 0
			}
			f(z.entry(z.blks[b].e[j]))
			j++
		}
		return
	}
	b, j := z.findRank(hi - 1)
	for n := hi - lo; n > 0; n-- {
		for j < 0 {
			b--
			j = len(z.blks[b].e) - 1
		}
		f(z.entry(z.blks[b].e[j]))
		j--
	}
}

// Rank is member's 0-based rank in ascending order.
func (z *Sorted) Rank(m []byte) (int, bool) {
	s, ok := z.Score(m)
	if !ok {
		return 0, false
	}
	b, j, _ := z.locate(Entry{Member: m, Score: s})
	return z.prefix(b) + j, true
}

// Put sets member's score, adding it (copied); it reports whether it was
// new. A score equal to the one stored leaves it (-0 and 0 are one score,
// as in Redis), and a score of -0 is stored as 0 while z is Small, as
// Redis's listpack stores it.
func (z *Sorted) Put(m []byte, score float64) bool {
	ref, exists := z.idx.Ref(m)
	var v []byte
	if exists {
		m, v = z.idx.At(ref) // the stored bytes: m may be the caller's
		cur := scoreOf(v)
		if cur == score {
			return false
		}
		z.unorder(cur, ref)
	} else {
		ref = z.idx.Insert(m, scoreBytes(0))
		m, v = z.idx.At(ref)
		z.added(m)
	}
	if score == 0 && z.Small() {
		score = 0 // -0 as 0
	}
	copy(v, scoreBytes(score))
	z.order(zent{score, ref}, m)
	return !exists
}

// Remove removes member and reports whether it was there.
func (z *Sorted) Remove(m []byte) bool {
	ref, ok := z.idx.Ref(m)
	if !ok {
		return false
	}
	stored, v := z.idx.At(ref)
	z.unorder(scoreOf(v), ref)
	z.removed(stored)
	z.idx.Delete(m)
	if z.idx.Waste() {
		z.compact()
	}
	return true
}

// RemoveRanks removes the entries of ranks [lo, hi).
func (z *Sorted) RemoveRanks(lo, hi int) {
	ms := make([][]byte, 0, hi-lo)
	for i := lo; i < hi; i++ {
		ms = append(ms, slices.Clone(z.At(i).Member))
	}
	for _, m := range ms {
		z.Remove(m)
	}
}

// compact rebuilds the index without its dead entries, in order, and the
// blocks' refs with it.
func (z *Sorted) compact() {
	var idx value.Table
	idx.Manual()
	for bi := range z.blks {
		for i, e := range z.blks[bi].e {
			m, v := z.idx.At(e.ref)
			z.blks[bi].e[i].ref = idx.Insert(m, v)
		}
	}
	z.idx = idx
	z.rebuild() // the tops' refs
}

// below reports whether entry e of the blocks is below t; the member is
// looked up only when the scores tie (no score is NaN).
func (z *Sorted) below(e zent, t Entry) bool {
	return e.score < t.Score || e.score == t.Score && z.memberCmp(e.ref, t.Member) < 0
}

// memberCmp compares the member of ref with m.
func (z *Sorted) memberCmp(ref uint32, m []byte) int {
	s, _ := z.idx.At(ref)
	return bytes.Compare(s, m)
}

// locate finds where t is, or would go: block b, position j in it; found
// reports t is there. Two binary searches: the first block whose last
// entry is not below t (else the last block), then t's place in it.
func (z *Sorted) locate(t Entry) (b, j int, found bool) {
	if len(z.blks) == 0 {
		return 0, 0, false
	}
	lo, hi := 0, len(z.tops)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if z.below(z.tops[h], t) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	b = min(lo, len(z.blks)-1)
	es := z.blks[b].e
	lo, hi = 0, len(es)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if z.below(es[h], t) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return b, lo, lo < len(es) && es[lo].score == t.Score && z.memberCmp(es[lo].ref, t.Member) == 0
}

// order puts e (member m) in its place.
func (z *Sorted) order(e zent, m []byte) {
	if len(z.blks) == 0 {
		z.blks = append(z.blks, zblock{e: []zent{e}})
		z.heap += int64(value.AllocSize(cap(z.blks[0].e) * entSize))
		z.rebuild()
		return
	}
	b, j, _ := z.locate(Entry{Member: m, Score: e.score})
	bl := &z.blks[b]
	old := cap(bl.e)
	bl.e = slices.Insert(bl.e, j, e)
	z.heap += int64(value.AllocSize(cap(bl.e)*entSize) - value.AllocSize(old*entSize))
	if len(bl.e) <= BlockEntries {
		z.tops[b] = bl.e[len(bl.e)-1]
		z.fenAdd(b, 1)
		return
	}
	// Full: split in two.
	half := len(bl.e) / 2
	nb := zblock{e: append(make([]zent, 0, BlockEntries), bl.e[half:]...)}
	z.heap += int64(value.AllocSize(cap(nb.e) * entSize))
	bl.e = bl.e[:half]
	z.blks = slices.Insert(z.blks, b+1, nb)
	z.rebuild()
}

// unorder takes the entry of ref, of score s, out of the blocks: found
// by its score, then by its ref among the entries of that score, so no
// member is looked up.
func (z *Sorted) unorder(s float64, ref uint32) {
	lo, hi := 0, len(z.tops)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if z.tops[h].score < s {
			lo = h + 1
		} else {
			hi = h
		}
	}
	b, j := lo, 0
	if b < len(z.blks) {
		es := z.blks[b].e
		for hi = len(es); j < hi; {
			h := int(uint(j+hi) >> 1)
			if es[h].score < s {
				j = h + 1
			} else {
				hi = h
			}
		}
	}
	for ; b < len(z.blks); b, j = b+1, 0 {
		es := z.blks[b].e
		for ; j < len(es) && es[j].score == s && es[j].ref != ref; j++ {
		}
		if j < len(es) {
			break
		}
	}
	if b == len(z.blks) || z.blks[b].e[j].ref != ref {
		panic("zset: an entry the index has is not in the order")
	}
	bl := &z.blks[b]
	bl.e = slices.Delete(bl.e, j, j+1)
	if len(bl.e) > 0 {
		z.tops[b] = bl.e[len(bl.e)-1]
		z.fenAdd(b, -1)
		return
	}
	z.heap -= int64(value.AllocSize(cap(bl.e) * entSize))
	z.blks = slices.Delete(z.blks, b, b+1)
	z.rebuild()
}

// rebuild makes the blocks' tops and the Fenwick tree of their counts
// again.
func (z *Sorted) rebuild() {
	if cap(z.tops) < len(z.blks) {
		z.tops = make([]zent, len(z.blks), 2*len(z.blks))
	}
	z.tops = z.tops[:len(z.blks)]
	for i, b := range z.blks {
		z.tops[i] = b.e[len(b.e)-1]
	}
	n := len(z.blks) + 1
	if cap(z.fen) < n {
		z.fen = make([]int32, n, 2*n)
	}
	z.fen = z.fen[:n]
	clear(z.fen)
	for i := 1; i < n; i++ {
		z.fen[i] += int32(len(z.blks[i-1].e))
		if k := i + i&-i; k < n {
			z.fen[k] += z.fen[i]
		}
	}
}

// fenAdd adds d to block b's count.
func (z *Sorted) fenAdd(b, d int) {
	for i := b + 1; i < len(z.fen); i += i & -i {
		z.fen[i] += int32(d)
	}
}

// prefix is the entries of the blocks before b.
func (z *Sorted) prefix(b int) int {
	s := 0
	for i := b; i > 0; i -= i & -i {
		s += int(z.fen[i])
	}
	return s
}

// findRank is the block holding rank r (< Len) and r's place in it.
func (z *Sorted) findRank(r int) (b, j int) {
	pos, rem := 0, int32(r)
	for step := 1 << (bitsLen(len(z.fen)-1) - 1); step > 0; step >>= 1 {
		if pos+step < len(z.fen) && z.fen[pos+step] <= rem {
			pos += step
			rem -= z.fen[pos]
		}
	}
	return pos, int(rem)
}

func bitsLen(n int) int {
	b := 0
	for n > 0 {
		n >>= 1
		b++
	}
	return max(b, 1)
}
