package logstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// add queues key's change to l (0: a delete): one change, as addRun
// takes a region's.
func (tr *tagReplay) add(k *[16]byte, tag uint32, l Loc) {
	a, b := splitKey(k)
	op := [1]tagOp{{a, b, l}}
	tr.addRun(int(tag>>24), op[:])
}

// TestTagReplaySettle checks E37 on the buckets alone: 200,000 changes
// (stores, overwrites and deletes) of 20,000 keys, with full tags and
// with tags cut to 3 top bits and to 3 low bits (every key in one bucket,
// runs of thousands), buckets settled only at the end and also early
// (from 1000 changes, 4 per winner): settled, the buckets hold exactly
// each key's last change that is not a delete, once, in tag order, and
// one settled early never held more than 4 changes per winner past 1000
// (winners, as tagReplay.build takes them).
func TestTagReplaySettle(t *testing.T) {
	for _, c := range []struct {
		mask  uint32
		early int
	}{{^uint32(0), 0}, {0xe0000000, 0}, {7, 0}, {0xe0000000, 1000}, {7, 1000}} {
		mask := c.mask
		t.Run(fmt.Sprintf("mask=%#x/early=%d", mask, c.early), func(t *testing.T) {
			prev := SetTagMask(mask)
			defer SetTagMask(prev)
			r := rand.New(rand.NewPCG(37, uint64(mask)))
			tr := &tagReplay{early: c.early}
			last := map[[16]byte]Loc{}
			for i := 1; i <= 200_000; i++ {
				var k [16]byte
				k[0], k[1], k[15] = byte(i%20_000), byte(i%20_000>>8), byte(r.IntN(2))
				l := Loc(i)
				if r.IntN(4) == 0 {
					l = 0
				}
				tr.add(&k, tagOf(&k), l)
				last[k] = l
				if bk := &tr.b[tagOf(&k)>>24]; c.early > 0 && bk.n > max(c.early, bk.limit) {
					t.Fatalf("a bucket holds %d changes, past max(%d, %d)", bk.n, c.early, bk.limit)
				}
			}
			want := 0
			for _, l := range last {
				if l != 0 {
					want++
				}
			}
			seen := map[[16]byte]bool{}
			prevTag := uint64(0)
			var sc settler
			for i := range tr.b {
				if tr.b[i].n == 0 {
					continue
				}
				p, ops := sc.sorted(&tr.b[i])
				winners(p, ops, func(tag uint32, op *tagOp) {
					k := joinKey(op.k0, op.k1)
					if seen[k] || last[k] != op.l || op.l == 0 {
						t.Fatalf("key %x: winner %v (seen before %v), last change %v", k, op.l, seen[k], last[k])
					}
					seen[k] = true
					if tag != tagOf(&k) {
						t.Fatalf("key %x: given tag %#x, its tag %#x", k, tag, tagOf(&k))
					}
					if uint64(tag) < prevTag {
						t.Fatalf("tag %#x after %#x", tag, prevTag)
					}
					prevTag = uint64(tag)
				})
			}
			if len(seen) != want {
				t.Fatalf("%d winners, want %d", len(seen), want)
			}
			tr.free()
		})
	}
}

// TestScanTagReplay checks E37 through a log: stores (inline and in
// extents, keys of 1 to 16 bytes), overwrites and deletes, reopened by
// scan with the tag buckets (ReplayBatch 0) and with the in-order keyed
// replay (ReplayBatch 1), with full tags and tags cut to 3 bits: the
// same Loc for every key, the same Items, LiveBytes and FullKeyItems,
// the same live records and bytes in every region, and those of the
// index before the close; the tag index in Robin Hood order. With the
// segment cap at its size (one segment: a group of all 256 buckets) and
// cut to 64 and 16 slots (a group of 2 buckets a segment; 2 segments a
// bucket, tagReplay.build).
func TestScanTagReplay(t *testing.T) {
	defer func(c int) { segCapSlots = c }(segCapSlots)
	for _, c := range []struct {
		mask uint32
		cap  int
	}{{^uint32(0), segCapSlots}, {0xe0000000, segCapSlots}, {^uint32(0), 64}, {^uint32(0), 16}, {0xe0000000, 16}} {
		mask := c.mask
		t.Run(fmt.Sprintf("mask=%#x/cap=%d", mask, c.cap), func(t *testing.T) {
			prev := SetTagMask(mask)
			defer SetTagMask(prev)
			segCapSlots = c.cap
			o := testOptions(t)
			l := mustOpenLog(t, o)
			l.churn(t, rand.New(rand.NewPCG(37, 2)), 400, 2500, 5, 200, 40)
			keyOf := churnKey
			before := l.Stats()
			locs := map[string]Loc{}
			for i := 0; i < 400; i++ {
				if loc, ok := l.lookup(keyOf(i)); ok {
					locs[keyOf(i)] = loc
				}
			}
			l.close(t)
			o.CheckpointPath = "-"
			var ref []regionState
			for _, batch := range []int{1, 0} {
				o.ReplayBatch = batch
				l := mustOpenLog(t, o)
				st := l.Stats()
				if st.Recovered != "scan" || st.Items != len(locs) || st.Items != before.Items || st.LiveBytes != before.LiveBytes || st.FullKeyItems != before.FullKeyItems {
					t.Errorf("batch %d: by %s %d items, %d live bytes, %d full keys; before the close %d (%d found), %d, %d",
						batch, st.Recovered, st.Items, st.LiveBytes, st.FullKeyItems, before.Items, len(locs), before.LiveBytes, before.FullKeyItems)
				}
				for i := 0; i < 400; i++ {
					got, ok := l.lookup(keyOf(i))
					if want, live := locs[keyOf(i)]; ok != live || got != want {
						t.Errorf("batch %d: %s at %v (found %v), want %v (live %v)", batch, keyOf(i), got, ok, want, live)
					}
				}
				l.Lock()
				regs := append([]regionState(nil), l.regs...)
				checkTagIndex(t, l.idx.tags)
				if batch == 0 && c.cap == 16 && mask == ^uint32(0) && l.idx.tags.depth < 8 {
					t.Errorf("a directory of depth %d, want 8 or more", l.idx.tags.depth)
				}
				l.Unlock()
				if err := l.CheckAccounting(); err != nil {
					t.Errorf("batch %d: %v", batch, err)
				}
				l.close(t)
				if ref == nil {
					ref = regs
					continue
				}
				sameLiveCounts(t, regs, ref)
			}
		})
	}
}

// TestTagReplayBuildDepth checks tagReplay.build on a log of overwrites
// (200,000 changes of 20,000 keys, segments capped at 64 slots): the
// directory is as deep as for the winners, not for the changes, every
// winner is in the index at its last Loc, and the regions' live counts
// are the winners'.
func TestTagReplayBuildDepth(t *testing.T) {
	defer func(c int) { segCapSlots = c }(segCapSlots)
	segCapSlots = 64
	const keys, changes, regions = 20_000, 200_000, 8
	tr := &tagReplay{}
	last := map[[16]byte]Loc{}
	for i := 0; i < changes; i++ {
		var k [16]byte
		k[0], k[1], k[2] = byte(i%keys), byte(i%keys>>8), 1
		l := mkLoc(i%regions, 16, 16*(i/regions%1000), 64)
		tr.add(&k, tagOf(&k), l)
		last[k] = l
	}
	lg := &Log{regs: make([]regionState, regions), lay: *testLay}
	x := tr.build(lg, nil)
	want, expected := uint(0), keys+keys/16
	for float64(expected>>want)/tagMaxLoad > float64(segCapSlots) {
		want++
	}
	if x.tags.depth > want {
		t.Fatalf("a directory of depth %d for %d winners of %d changes, want at most %d", x.tags.depth, keys, changes, want)
	}
	checkTagIndex(t, x.tags)
	if x.tags.len() != keys || x.full != keys {
		t.Fatalf("%d entries (%d of 16-byte keys), want %d", x.tags.len(), x.full, keys)
	}
	for k, l := range last {
		if s, _ := x.tags.findLoc(tagOf(&k), l); s == nil {
			t.Fatalf("key %x: its last Loc %#x is not in the index", k, uint64(l))
		}
	}
	n := 0
	for _, r := range lg.regs {
		n += int(r.live)
	}
	if n != keys || lg.liveBytes != int64(keys*64) {
		t.Fatalf("%d live records of %d bytes, want %d of %d", n, lg.liveBytes, keys, keys*64)
	}
}
