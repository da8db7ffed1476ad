package logstore

import (
	"runtime"
	"slices"
	"sync"
)

// A scan's default replay (E37): instead of a keyed table that a later
// record of a key finds the earlier one in (replay.go, the route of
// Options.ReplayBatch > 0), every change is appended, in log order, to
// one of 256 buckets by the top 8 bits of its key's tag. Once the log is
// read, each bucket is settled: its changes are sorted by tag, stably
// (a key's changes keep their log order), the last change of each key
// wins (a delete: the key is absent) and the winners are kept in tag
// order. The key index is then sized for the winners and loaded bucket
// by bucket, in tag order, as a checkpoint's is (tagIndex.load). So a
// change costs an append, and a key a sort step and a load; no table is
// probed at random, and the only DRAM beside the index is the changes
// themselves (24 bytes each), given back a bucket at a time as loaded.

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
	exts   int // of the winners, once settled: extent Locs
	limit  int // settle early when n reaches it and tagReplay.early
}

// tagReplay is a scan's changes, bucketed by tag prefix.
type tagReplay struct {
	b     [tagBuckets]tagBucket
	n     int     // changes added
	early int     // a bucket's least changes to settle early (0: tagSettleMin)
	keys  int     // winners, once settled
	exts  int     // winners with an extent Loc
	sc    settler // for the buckets add settles early
}

// settler is the scratch of a bucket's settle.
type settler struct {
	pairs, tmp []uint64 // tag<<32 | index in the bucket
	ops        []tagOp  // a copy of the bucket's changes
}

// add queues key's change to l (0: a delete).
func (tr *tagReplay) add(k *[16]byte, l Loc) {
	if tr.early == 0 {
		tr.early = tagSettleMin
	}
	bk := &tr.b[tagOf(k)>>24]
	if len(bk.chunks) == 0 || len(bk.chunks[len(bk.chunks)-1]) == cap(bk.chunks[len(bk.chunks)-1]) {
		n := tagChunkFirst
		if len(bk.chunks) > 0 {
			n = min(tagChunkMax, 2*cap(bk.chunks[len(bk.chunks)-1]))
		}
		c, m := mappedSlice[tagOp](n, tagChunkMap)
		bk.chunks, bk.mem = append(bk.chunks, c[:0]), append(bk.mem, m)
	}
	a, b := splitKey(k)
	c := &bk.chunks[len(bk.chunks)-1]
	*c = append(*c, tagOp{a, b, l})
	bk.n++
	tr.n++
	if bk.n >= max(bk.limit, tr.early) {
		// Settled early, a bucket holds at most 2^19 changes or 4 per
		// winner (a live key), however many records of the log are dead.
		tr.sc.settle(bk)
		bk.limit = 4 * bk.n
	}
}

// settle settles every bucket (settler.settle), on as many goroutines as
// there are CPUs (up to 4; the buckets are independent), and counts the
// winners (keys, exts).
func (tr *tagReplay) settle() {
	tr.sc = settler{}
	workers := min(runtime.GOMAXPROCS(0), 4)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var sc settler
			for i := w; i < len(tr.b); i += workers {
				sc.settle(&tr.b[i])
			}
		})
	}
	wg.Wait()
	for i := range tr.b {
		tr.keys += tr.b[i].n
		tr.exts += tr.b[i].exts
	}
}

// settle sorts bk's changes by tag, stably, and keeps the last change of
// each key that is not a delete, in tag order, in bk's chunks.
func (sc *settler) settle(bk *tagBucket) {
	m := bk.n
	if m == 0 {
		return
	}
	if cap(sc.pairs) < m {
		sc.pairs, sc.tmp, sc.ops = make([]uint64, m), make([]uint64, m), make([]tagOp, m)
	}
	p, ops := sc.pairs[:m], sc.ops[:0]
	for _, c := range bk.chunks {
		ops = append(ops, c...)
	}
	for j := range ops {
		k := joinKey(ops[j].k0, ops[j].k1)
		p[j] = uint64(tagOf(&k))<<32 | uint64(j)
	}
	p = sortPairs(p, sc.tmp[:m])
	// The winners go back into the chunks (copied out to ops), in tag
	// order. In a run of one tag (almost always one change; a longer one
	// is sorted by key, stably) the last change of each key wins.
	bk.n, bk.exts, bk.chunks[0] = 0, 0, bk.chunks[0][:0]
	ci := 0
	put := func(op *tagOp) {
		if len(bk.chunks[ci]) == cap(bk.chunks[ci]) {
			ci++
			bk.chunks[ci] = bk.chunks[ci][:0]
		}
		bk.chunks[ci] = append(bk.chunks[ci], *op)
		bk.n++
		if op.l.Ext() {
			bk.exts++
		}
	}
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
				put(op)
			}
		}
		s = e
	}
	// The chunks after the winners' go back: later changes are appended
	// after the winners, so a key's changes stay in log order.
	unmapAll(bk.mem[ci+1:])
	clear(bk.chunks[ci+1:])
	clear(bk.mem[ci+1:])
	bk.chunks, bk.mem = bk.chunks[:ci+1], bk.mem[:ci+1]
}

// sortPairs sorts p by its top 32 bits (the tag; its top 8 bits are the
// bucket's, the same for all), stably, through tmp: an LSD radix sort of
// three 8-bit digits. It returns the sorted slice (p or tmp).
func sortPairs(p, tmp []uint64) []uint64 {
	for shift := uint(32); shift < 56; shift += 8 {
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
	return p
}

// load builds the key index of the settled winners, sized for them and
// 1/32 more, as keyIndexFrom does, giving lg each winner's live count,
// and frees each bucket as it is loaded.
func (tr *tagReplay) load(lg *Log, bind func(mem []byte) error) *keyIndex {
	in := tr.keys - tr.exts
	k := &keyIndex{tags: newTagIndex(in+in/32, bind), ext: newExtIndex(tr.exts+tr.exts/32, bind)}
	for i := range tr.b {
		bk := &tr.b[i]
		for _, c := range bk.chunks {
			for j := range c {
				op := &c[j]
				lg.addLocked(op.l)
				k.full += fullOf(op.l)
				if op.l.Ext() {
					k.ext.load(op.k0, op.k1, op.l)
					continue
				}
				key := joinKey(op.k0, op.k1)
				k.tags.load(tagOf(&key), op.l)
			}
		}
		bk.free()
	}
	k.tags.finishLoad()
	return k
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
