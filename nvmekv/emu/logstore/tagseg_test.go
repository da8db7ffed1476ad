package logstore

import (
	"math/rand/v2"
	"testing"
)

// checkTagIndex checks the tag index's structure: the directory points
// each entry at the segment whose prefix it is, every segment's count is
// its occupied slots and they add up to the index's, every entry's tag
// is in its segment's range and sits within its probe sequence with no
// gap, and each run is in Robin Hood order (an entry is at most one slot
// further from its home than the entry before it).
func checkTagIndex(t *testing.T, x *tagIndex) {
	t.Helper()
	if len(x.dir) != 1<<x.depth {
		t.Fatalf("a directory of %d entries at depth %d", len(x.dir), x.depth)
	}
	total := 0
	for i, s := range x.dir {
		if s.depth > x.depth || s.lo>>(32-x.depth) > uint64(i) || s.end()>>(32-x.depth) <= uint64(i) {
			t.Fatalf("directory entry %d of depth %d points at the segment of depth %d from %#x", i, x.depth, s.depth, s.lo)
		}
		if uint64(i) != s.lo>>(32-x.depth) {
			continue // counted at its first entry
		}
		n := 0
		for j := range s.slots {
			if s.emptyAt(j) {
				continue
			}
			n++
			tag := s.tagAt(j)
			if uint64(tag) < s.lo || uint64(tag) >= s.end() || s.depth < x.lay.d0 {
				t.Fatalf("tag %#x in the segment of [%#x, %#x), depth %d, layout d0 %d", tag, s.lo, s.end(), s.depth, x.lay.d0)
			}
			for k := s.home(tag); k != j; {
				if s.emptyAt(k) {
					t.Fatalf("the entry at slot %d has an empty slot %d in its probe sequence", j, k)
				}
				if k++; k == s.n {
					k = 0
				}
			}
			if nx := (j + 1) % s.n; !s.emptyAt(nx) && s.dist(nx) > s.dist(j)+1 {
				t.Fatalf("slot %d is %d from its home after slot %d at %d: not in Robin Hood order", nx, s.dist(nx), j, s.dist(j))
			}
		}
		if n != s.count || len(s.slots) != s.n {
			t.Fatalf("segment [%#x, %#x): %d entries, count %d, %d slots of %d", s.lo, s.end(), n, s.count, len(s.slots), s.n)
		}
		total += n
	}
	if total != x.count {
		t.Fatalf("the segments hold %d entries, the index counts %d", total, x.count)
	}
}

// TestTagIndexModel (E35): adds, repoints and removals against a map,
// with segments of 512 slots at most (they grow, split and the directory
// doubles), with tags spread evenly and with tags cut to a few bits
// (segments whose entries no split divides grow past the cap instead);
// each entry is found by its tag and Loc, every entry of a tag is among
// its candidates, and the structure holds (checkTagIndex).
//
// The slots hold whole tags (testLay), and, with tags spread evenly,
// their low 23 bits, the segments' prefixes of at least 9 the rest
// (deepLay, E8).
func TestTagIndexModel(t *testing.T) {
	defer func(c int) { segCapSlots = c }(segCapSlots)
	segCapSlots = 512
	ops := 60_000
	if testing.Short() {
		ops = 15_000 // the race run: its masked tags' long segments cost O(n²) there
	}
	for _, c := range []struct {
		mask uint32
		lay  *slotLayout
	}{{^uint32(0), testLay}, {0xe0000000, testLay}, {0x8000000f, testLay}, {^uint32(0), deepLay}} {
		mask := c.mask
		rng := rand.New(rand.NewPCG(35, uint64(mask)))
		x := newTagIndex(0, c.lay, nil)
		model := map[Loc]uint32{}
		var locs []Loc
		for op := 0; op < ops; op++ {
			switch r := rng.IntN(10); {
			case r < 6 || len(locs) == 0:
				l := mkLoc(len(locs)%1000+1, 16, 16*(len(locs)/1000%4096), 64)
				for _, ok := model[l]; ok; _, ok = model[l] {
					l = mkLoc(rng.IntN(1000)+1, 16, 16*rng.IntN(4096), 64)
				}
				tag := rng.Uint32() & mask
				x.add(tag, l)
				model[l], locs = tag, append(locs, l)
			case r < 8:
				j := rng.IntN(len(locs))
				l := locs[j]
				s, i := x.findLoc(model[l], l)
				if s == nil {
					t.Fatalf("mask %#x op %d: Loc %#x of tag %#x not found", mask, op, uint64(l), model[l])
				}
				x.removeAt(s, i)
				delete(model, l)
				locs[j] = locs[len(locs)-1]
				locs = locs[:len(locs)-1]
			default:
				j := rng.IntN(len(locs))
				l, nl := locs[j], mkLoc(rng.IntN(1000)+1, 16, 16*rng.IntN(4096), 64)
				if _, ok := model[nl]; ok {
					continue
				}
				tag := model[l]
				s, i := x.findLoc(tag, l)
				x.setAt(s, i, nl)
				delete(model, l)
				model[nl], locs[j] = tag, nl
			}
			if x.len() != len(model) {
				t.Fatalf("mask %#x op %d: %d entries, model %d", mask, op, x.len(), len(model))
			}
			if op%1000 != 0 {
				continue
			}
			checkTagIndex(t, x)
			for j := 0; j < len(locs); j += 1 + len(locs)/300 { // a sample: a tag of the cut masks has thousands
				l := locs[j]
				tag, seen := model[l], false
				c := x.cands(tag)
				for s, i := c.next(); s != nil; s, i = c.next() {
					if s.tagAt(i) != tag {
						t.Fatalf("mask %#x: a candidate of tag %#x has tag %#x", mask, tag, s.tagAt(i))
					}
					seen = seen || s.locAt(i) == l
				}
				if !seen {
					t.Fatalf("mask %#x op %d: Loc %#x is not among the candidates of its tag %#x", mask, op, uint64(l), tag)
				}
			}
		}
		n := 0
		x.each(func(tag uint32, l Loc) {
			if model[l] != tag {
				t.Fatalf("mask %#x: each gave tag %#x Loc %#x, model %#x", mask, tag, uint64(l), model[l])
			}
			n++
		})
		if n != len(model) || x.depth == 0 {
			t.Fatalf("mask %#x: each saw %d of %d entries; directory depth %d", mask, n, len(model), x.depth)
		}
	}
}

// TestTagIndexBytesBound (E35): a tag index filled from empty, as a new
// log's is, holds at most 12 bytes a key (segments, their headers and
// the directory) at every count from 100,000 keys up to 2M, and its
// segments split at the cap: with slots holding whole tags (d0 = 0), and
// under directories that start at depth 4 and 8 (stores of 2,048 and
// 2^15 regions of 4 MiB, E8), whose segments grow in step, so that the
// pages an off-heap one's slots are rounded to come at once (500k keys
// for d0 = 4; under -short, the race run, 500k at d0 = 0, 200k at d0 =
// 4, none at d0 = 8).
func TestTagIndexBytesBound(t *testing.T) {
	for _, c := range []struct {
		lay         *slotLayout
		keys, short int
	}{{testLay, 2_000_000, 500_000}, {mustLayout(2048, 4<<20), 500_000, 200_000}, {mustLayout(1<<15, 4<<20), 2_000_000, 0}} {
		keys := c.keys
		if testing.Short() {
			keys = c.short
		}
		if keys == 0 {
			continue
		}
		rng := rand.New(rand.NewPCG(35, 16))
		x := newTagIndex(0, c.lay, nil)
		worst := 0.0
		for i := 1; i <= keys; i++ {
			x.add(rng.Uint32(), mkLoc(i%1000+1, 16, 16*(i/1000%4096), 64))
			if i < 100_000 || i%1000 != 0 {
				continue
			}
			per := float64(x.bytes()) / float64(i)
			worst = max(worst, per)
			if per > 12 {
				t.Fatalf("d0 %d: %d keys take %d bytes of tag index: %.2f a key, want at most 12", c.lay.d0, i, x.bytes(), per)
			}
		}
		if x.depth == 0 {
			t.Fatalf("%d keys in one segment", keys)
		}
		checkTagIndex(t, x)
		t.Logf("d0 %d, %d keys: at most %.2f bytes a key from 100,000 on; directory depth %d", c.lay.d0, keys, worst, x.depth)
	}
}

// TestTagIndexLoad (E29): load, in the order each gives the entries (a
// checkpoint's), in tag order (a scan's), and shuffled, into an index
// sized for them and into one too small (it grows and splits while
// loading), leaves every entry findable among its tag's candidates and
// the structure sound (checkTagIndex), with segments of 512 slots at
// most and tags even and cut to a few bits.
func TestTagIndexLoad(t *testing.T) {
	defer func(c int) { segCapSlots = c }(segCapSlots)
	segCapSlots = 512
	n := 40_000
	if testing.Short() {
		n = 10_000 // the race run, as TestTagIndexModel
	}
	for _, mask := range []uint32{^uint32(0), 0xfff00000, 0xe0000000} {
		rng := rand.New(rand.NewPCG(29, uint64(mask)))
		x := newTagIndex(0, testLay, nil)
		want := map[Loc]uint32{}
		for i := 0; i < n; i++ {
			tag, l := rng.Uint32()&mask, mkLoc(i%1000+1, 16, 16*(i/1000), 64)
			x.add(tag, l)
			want[l] = tag
		}
		var each []tent
		x.each(func(tag uint32, l Loc) { each = append(each, mkTent(tag, l)) })
		sorted := sortByTag(append([]tent(nil), each...), make([]tent, len(each)))
		shuffled := append([]tent(nil), each...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for _, order := range []struct {
			name string
			ents []tent
		}{{"each", each}, {"sorted", sorted}, {"shuffled", shuffled}} {
			for _, size := range []int{len(each) + len(each)/32, len(each) / 8} {
				y := newTagIndex(size, testLay, nil)
				for _, e := range order.ents {
					y.load(e.tag, e.loc())
				}
				y.finishLoad()
				checkTagIndex(t, y)
				if y.len() != len(want) {
					t.Fatalf("mask %#x, %s into %d: %d entries, want %d", mask, order.name, size, y.len(), len(want))
				}
				for j := 0; j < len(each); j += 1 + len(each)/2000 {
					e := each[j]
					if s, _ := y.findLoc(e.tag, e.loc()); s == nil {
						t.Fatalf("mask %#x, %s into %d: Loc %#x of tag %#x not found", mask, order.name, size, uint64(e.loc()), e.tag)
					}
				}
			}
		}
	}
}
