package logstore

import "slices"

// A scan's default replay (E37): instead of a keyed table that a later
// record of a key finds the earlier one in (replay.go, the route of
// Options.ReplayBatch > 0), every change is appended, in log order, to
// one of 256 buckets by the top 8 bits of its key's tag: a region's walk
// computes the tags and groups its changes by bucket, and the scan
// appends each group to its bucket in one copy. Once the log is read, each bucket is settled:
// its changes are sorted by tag, stably (a key's changes keep their log
// order), and the last change of each key wins (a delete: the key is
// absent); the winners go, in tag order, straight into the key index's
// segments that the bucket covers, made for them (tagbuild.go), on as
// many goroutines as CPUs. So a change costs an append, and a key a sort
// step and a load; no table is probed at random, and the only DRAM
// beside the index is the changes themselves (24 bytes each), given back
// a bucket at a time as loaded.

// tagOp is one change: key (k0, k1) now at l, or deleted (l 0).
type tagOp struct {
	k0, k1 uint64
	l      Loc
}

const (
	tagBuckets    = 256
	tagChunkFirst = 256      // ops in a bucket's first chunk
	tagChunkMax   = 1 << 17  // ops in a full chunk: 3 MiB
	tagChunkMap   = 64 << 10 // a chunk this large or larger is mapped
	tagSettleMin  = 1 << 19  // changes a bucket holds before it settles early
)

// tagBucket holds one bucket's changes in chunks that double up to
// tagChunkMax, those of 64 KiB or more mapped off the heap (about 92 KB
// of a bucket's first changes are on it); mem holds the mappings.
type tagBucket struct {
	chunks [][]tagOp
	mem    [][]byte
	n      int
	limit  int // settle early when n reaches it and tagReplay.early
}

// tagReplay is a scan's changes, bucketed by tag prefix.
type tagReplay struct {
	b     [tagBuckets]tagBucket
	n     int     // changes added
	early int     // a bucket's least changes to settle early (0: tagSettleMin)
	sc    settler // for the buckets add settles early
}

// settler is the scratch of a bucket's settle.
type settler struct {
	pairs, tmp []uint64 // tag<<32 | index in the bucket
	ops        []tagOp  // a copy of the bucket's changes
}

// addRegion appends a region's changes, grouped by bucket (byBucket), to
// their buckets, and settles early each bucket that reached its limit.
func (tr *tagReplay) addRegion(rc *regionChanges) {
	start := int32(0)
	for b := range tr.b {
		if end := rc.ends[b]; end > start {
			tr.addRun(b, rc.ops[start:end])
			start = end
		}
	}
}

// addRun appends ops, changes of keys of bucket b in log order, to it.
func (tr *tagReplay) addRun(b int, ops []tagOp) {
	if tr.early == 0 {
		tr.early = tagSettleMin
	}
	bk := &tr.b[b]
	tr.n += len(ops)
	bk.n += len(ops)
	for len(ops) > 0 {
		if len(bk.chunks) == 0 || len(bk.chunks[len(bk.chunks)-1]) == cap(bk.chunks[len(bk.chunks)-1]) {
			n := tagChunkFirst
			if len(bk.chunks) > 0 {
				n = min(tagChunkMax, 2*cap(bk.chunks[len(bk.chunks)-1]))
			}
			c, m := mappedSlice[tagOp](n, tagChunkMap)
			bk.chunks, bk.mem = append(bk.chunks, c[:0]), append(bk.mem, m)
		}
		c := &bk.chunks[len(bk.chunks)-1]
		n := copy((*c)[len(*c):cap(*c)], ops)
		*c, ops = (*c)[:len(*c)+n], ops[n:]
	}
	if bk.n >= max(bk.limit, tr.early) {
		// Settled early, a bucket holds at most 2^19 changes or 4 per
		// winner (a live key), and a region's changes more, however many
		// records of the log are dead.
		tr.sc.settle(bk)
		bk.limit = 4 * bk.n
	}
}

// regionChanges are the index changes a region's walk found: in log
// order as added, and, once byBucket ran, grouped by tag bucket, stably
// (a key's changes keep their log order), bucket b's in
// ops[ends[b-1]:ends[b]].
type regionChanges struct {
	ops, tmp []tagOp
	bks      []uint8 // each change's bucket, in log order
	ends     [tagBuckets]int32
}

// reset empties rc for the next region, keeping its room.
func (rc *regionChanges) reset() { rc.ops, rc.bks = rc.ops[:0], rc.bks[:0] }

// add appends key's change to l (0: a delete), with its bucket (the top 8
// bits of its tag) when bucketed.
func (rc *regionChanges) add(k *[16]byte, l Loc, bucketed bool) {
	a, b := splitKey(k)
	rc.ops = append(rc.ops, tagOp{a, b, l})
	if bucketed {
		rc.bks = append(rc.bks, uint8(tagOf(k)>>24))
	}
}

// byBucket groups the changes by bucket, stably (a counting sort).
func (rc *regionChanges) byBucket() {
	var at [tagBuckets]int32
	for _, b := range rc.bks {
		at[b]++
	}
	sum := int32(0)
	for b, c := range at {
		at[b] = sum
		sum += c
		rc.ends[b] = sum
	}
	if cap(rc.tmp) < len(rc.ops) {
		rc.tmp = make([]tagOp, cap(rc.ops))
	}
	t := rc.tmp[:len(rc.ops)]
	for j, b := range rc.bks {
		t[at[b]] = rc.ops[j]
		at[b]++
	}
	rc.ops, rc.tmp = t, rc.ops
}

// sorted copies bk's changes out (ops) and returns them with pairs of
// their tags and indices in ops, sorted by tag, stably: the scratch of
// winners, valid until sc's next use. The changes are copied grouped by
// the tag's second byte (its first is the bucket's), stably, and each
// group's pairs are then sorted by the tag's last two bytes (sortLow):
// a group (about 1,500 changes a bucket of 390,000) stays in the CPU's
// caches, where winners reads its changes in the order of the pairs.
func (sc *settler) sorted(bk *tagBucket) (p []uint64, ops []tagOp) {
	m := bk.n
	if cap(sc.pairs) < m {
		sc.pairs, sc.tmp, sc.ops = make([]uint64, m), make([]uint64, m), make([]tagOp, m)
	}
	p, tmp, ops := sc.pairs[:m], sc.tmp[:m], sc.ops[:m]
	var at [257]int
	j := 0
	for _, c := range bk.chunks {
		for i := range c {
			k := joinKey(c[i].k0, c[i].k1)
			tag := tagOf(&k)
			tmp[j] = uint64(tag) << 32
			at[tag>>16&0xff+1]++
			j++
		}
	}
	for d := 1; d < len(at); d++ {
		at[d] += at[d-1]
	}
	starts := at
	j = 0
	for _, c := range bk.chunks {
		for i := range c {
			d := tmp[j] >> 48 & 0xff
			to := at[d]
			at[d]++
			ops[to] = c[i]
			p[to] = tmp[j] | uint64(to)
			j++
		}
	}
	for d := 0; d < 256; d++ {
		if s, e := starts[d], starts[d+1]; e-s > 1 {
			sortLow(p[s:e], tmp[s:e])
		}
	}
	return p, ops
}

// sortLow sorts p by bits 32 to 47 (the tag's last two bytes), stably,
// through tmp: an LSD radix sort of two 8-bit digits, p sorted at the
// end.
func sortLow(p, tmp []uint64) {
	for shift := uint(32); shift < 48; shift += 8 {
		var count [257]int
		for _, v := range p {
			count[v>>shift&0xff+1]++
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for _, v := range p {
			d := v >> shift & 0xff
			tmp[count[d]] = v
			count[d]++
		}
		p, tmp = tmp, p
	}
}

// winners calls fn, in tag order, with the last change of each key in
// ops (p sorted by tag, as sorted returns it) that is not a delete, and
// its tag. In a run of one tag (almost always one change; a longer one
// is sorted by key, stably) the last change of each key wins.
func winners(p []uint64, ops []tagOp, fn func(tag uint32, op *tagOp)) {
	m := len(p)
	for s := 0; s < m; {
		e := s + 1
		for e < m && p[e]>>32 == p[s]>>32 {
			e++
		}
		if e-s > 1 {
			slices.SortStableFunc(p[s:e], func(x, y uint64) int {
				a, b := &ops[uint32(x)], &ops[uint32(y)]
				if c := cmpU64(a.k0, b.k0); c != 0 {
					return c
				}
				return cmpU64(a.k1, b.k1)
			})
		}
		for i := s; i < e; i++ {
			op := &ops[uint32(p[i])]
			if i+1 < e {
				if nx := &ops[uint32(p[i+1])]; nx.k0 == op.k0 && nx.k1 == op.k1 {
					continue // a later change of the same key
				}
			}
			if op.l != 0 {
				fn(uint32(p[s]>>32), op)
			}
		}
		s = e
	}
}

// settle keeps bk's winners (winners), in tag order, in its chunks: an
// early settle, while the log is still read.
func (sc *settler) settle(bk *tagBucket) {
	if bk.n == 0 {
		return
	}
	p, ops := sc.sorted(bk)
	bk.n, bk.chunks[0] = 0, bk.chunks[0][:0]
	ci := 0
	winners(p, ops, func(_ uint32, op *tagOp) {
		if len(bk.chunks[ci]) == cap(bk.chunks[ci]) {
			ci++
			bk.chunks[ci] = bk.chunks[ci][:0]
		}
		bk.chunks[ci] = append(bk.chunks[ci], *op)
		bk.n++
	})
	// The chunks after the winners' go back: later changes are appended
	// after the winners, so a key's changes stay in log order.
	unmapAll(bk.mem[ci+1:])
	clear(bk.chunks[ci+1:])
	clear(bk.mem[ci+1:])
	bk.chunks, bk.mem = bk.chunks[:ci+1], bk.mem[:ci+1]
}

// free unmaps the bucket's mappings and drops its changes.
func (bk *tagBucket) free() {
	unmapAll(bk.mem)
	*bk = tagBucket{}
}

// free drops every bucket (a scan that failed part way).
func (tr *tagReplay) free() {
	for i := range tr.b {
		tr.b[i].free()
	}
}
