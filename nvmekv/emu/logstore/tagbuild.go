package logstore

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Building a scan's key index from its tag buckets (E37). The index's
// directory depth is chosen for the winners expected, as newTagIndex
// chooses it for expected keys, so that a bucket covers whole segments
// (depth 8 or more) or a segment whole buckets. Each such group of buckets is settled, then its segments are
// made, each sized for its own winners and 1/32 more, and loaded in tag
// order as a checkpoint's are (ttable.load), the group's memory given
// back: on as many goroutines as CPUs (up to 4), since groups share no
// segment. What a group cannot place (a segment full, an entry that
// would wrap past its end) and the extent winners go in afterwards.

// buildPart is one goroutine's share of a build: what it counted, and
// what it left for afterwards.
type buildPart struct {
	live, liveB []uint32 // per region: the winners' records and bytes
	bytes       int64    // the winners' bytes
	full        int      // winners with 16-byte keys (fullOf)
	inline      int      // entries placed in segments
	later       []tent   // inline winners left for tagIndex.add
	exts        []tagOp  // extent winners
	win         []tent   // the group's inline winners, in tag order
	sc          settler
}

// build settles every bucket and loads the winners into a new key index,
// giving lg each winner's live counts; it frees every bucket.
func (tr *tagReplay) build(lg *Log, bind func(mem []byte) error) *keyIndex {
	held, big := 0, 0
	for i := range tr.b {
		held += tr.b[i].n
		if tr.b[i].n > tr.b[big].n {
			big = i
		}
	}
	// The winners are known only once settled: a log of many overwrites
	// holds many more changes than keys, and a directory chosen for the
	// changes would make many small segments (on the Go heap below 64
	// KiB). The largest bucket is settled first to count its winners,
	// and the changes held are scaled by its share (the tags spread the
	// keys evenly; only the depth rests on it, not a segment's size).
	if hb := tr.b[big].n; hb > 0 {
		var sc settler
		w := 0
		p, ops := sc.sorted(&tr.b[big])
		winners(p, ops, func(uint32, *tagOp) { w++ })
		held = int(int64(held) * int64(w) / int64(hb))
	}
	expected := max(held+held/16, minExpected)
	d := lg.lay.d0
	for d < maxDirDepth && float64(expected>>d)/tagMaxLoad > float64(segCapSlots) {
		d++
	}
	x := &tagIndex{dir: make([]*ttable, 1<<d), depth: d, bind: bind, lay: &lg.lay}
	per := uint(max(0, 8-int(d))) // a group is 1<<per buckets
	groups := tagBuckets >> per
	parts := make([]buildPart, min(runtime.GOMAXPROCS(0), 4, groups))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range parts {
		p := &parts[w]
		p.live, p.liveB = make([]uint32, len(lg.regs)), make([]uint32, len(lg.regs))
		wg.Go(func() {
			for g := int(next.Add(1)) - 1; g < groups; g = int(next.Add(1)) - 1 {
				p.group(tr, x, g, per)
			}
		})
	}
	wg.Wait()
	k := &keyIndex{tags: x}
	exts := 0
	for i := range parts {
		p := &parts[i]
		for r := range lg.regs {
			lg.regs[r].live += p.live[r]
			lg.regs[r].liveB += p.liveB[r]
		}
		lg.liveBytes += p.bytes
		k.full += p.full
		x.count += p.inline
		x.later = append(x.later, p.later...)
		exts += len(p.exts)
	}
	x.finishLoad()
	k.ext = newExtIndex(exts+exts/32, bind)
	for i := range parts {
		for _, op := range parts[i].exts {
			k.ext.load(op.k0, op.k1, op.l)
		}
	}
	return k
}

// group settles the buckets of group g (1<<per of them, from bucket
// g<<per), makes the directory's segments of their tags, sized for their
// winners, and loads them.
func (p *buildPart) group(tr *tagReplay, x *tagIndex, g int, per uint) {
	p.win = p.win[:0]
	for i := g << per; i < (g+1)<<per; i++ {
		bk := &tr.b[i]
		if bk.n > 0 {
			ps, ops := p.sc.sorted(bk)
			winners(ps, ops, func(tag uint32, op *tagOp) {
				r := op.l.Region()
				p.live[r]++
				p.liveB[r] += uint32(op.l.Size())
				p.bytes += int64(op.l.Size())
				p.full += fullOf(op.l)
				if op.l.Ext() {
					p.exts = append(p.exts, *op)
					return
				}
				p.win = append(p.win, mkTent(tag, op.l))
			})
		}
		bk.free()
	}
	shift := 32 - x.depth
	lo, hi := uint64(g)<<(24+per)>>shift, uint64(g+1)<<(24+per)>>shift
	w := p.win
	for j := lo; j < hi; j++ {
		n := 0
		for n < len(w) && uint64(w[n].tag)>>shift == j {
			n++
		}
		s := x.newSeg(x.depth, j<<shift, max(n+n/32, minExpected>>x.depth), false)
		x.dir[j] = s
		for _, e := range w[:n] {
			if s.bulkEnd < 0 || s.full() || !s.load(e.tag, e.loc()) {
				p.later = append(p.later, e)
				continue
			}
			p.inline++
		}
		w = w[n:]
	}
}
