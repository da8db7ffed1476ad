package logstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTagRangeWalk (E32): walks of a tag index in tag ranges of random
// spans, from 0 to the end, visit every entry exactly once and only in
// its range: with tags spread evenly and with half of them in the top
// 2^20 (their runs wrap past their segment's end), at every stage of
// growth (segments of 256 slots at most: grown, split, the directory
// doubled, and past the cap where the top tags cannot be split within
// maxDirDepth bits).
func TestTagRangeWalk(t *testing.T) {
	defer func(c int) { segCapSlots = c }(segCapSlots)
	segCapSlots = 256
	rng := rand.New(rand.NewPCG(32, 1))
	x := newTagIndex(0, testLay, nil)
	want := map[Loc]uint32{}
	for i := 1; i <= 30_000; i++ {
		tag := rng.Uint32()
		if i%2 == 0 {
			tag |= 0xfff00000
		}
		l := mkLoc(i%1000, 16, 16*(i/1000), 64)
		x.add(tag, l)
		want[l] = tag
		if i%2500 != 0 {
			continue
		}
		checkTagIndex(t, x)
		got := map[Loc]bool{}
		for from := uint64(0); from < TagSpace; {
			next := min(from+1+rng.Uint64N(1<<uint(rng.IntN(33))), TagSpace)
			x.segs(from, next, func(s *ttable) {
				s.walkRange(from, next, func(tag uint32, l Loc) {
					if uint64(tag) < from || uint64(tag) >= next || want[l] != tag || got[l] {
						t.Fatalf("after %d adds: the walk of [%#x, %#x) gave tag %#x Loc %#x (want tag %#x, seen %v)", i, from, next, tag, uint64(l), want[l], got[l])
					}
					got[l] = true
				})
			})
			from = next
		}
		if len(got) != len(want) {
			t.Fatalf("after %d adds (directory depth %d): the walk visited %d of %d entries", i, x.depth, len(got), len(want))
		}
	}
	if x.depth != maxDirDepth {
		t.Fatalf("directory depth %d, want %d (the top tags split as far as they may)", x.depth, maxDirDepth)
	}
}

// TestTagRangeLocked (E32): TagRangeLocked from 0 with random n, resumed
// at each next, visits every entry of a log (inline and extent) once,
// before and after Deletes.
func TestTagRangeLocked(t *testing.T) {
	o := testOptions(t)
	o.Capacity = 256 * int64(o.RegionBytes)
	l := mustOpenLog(t, o)
	defer l.close(t)
	rng := rand.New(rand.NewPCG(32, 2))
	for i := 0; i < 3000; i++ {
		n := 10 + rng.IntN(200)
		if i%10 == 0 {
			n = 4096 // an extent
		}
		l.store(t, fmt.Sprintf("key%d", i), testValue(i, 0, n))
	}
	check := func(what string) {
		want := map[Loc]bool{}
		l.idx.eachLoc(func(lc Loc) { want[lc] = true })
		got := map[Loc]bool{}
		calls := 0
		for from := uint64(0); from < TagSpace; calls++ {
			l.RLock()
			next := l.TagRangeLocked(from, 1+rng.IntN(100), func(lc Loc) {
				if got[lc] || !want[lc] {
					t.Fatalf("%s: Loc %#x visited twice or not live", what, uint64(lc))
				}
				got[lc] = true
			})
			l.RUnlock()
			if next <= from {
				t.Fatalf("%s: next %#x after from %#x", what, next, from)
			}
			from = next
		}
		if len(got) != len(want) || calls < 10 {
			t.Fatalf("%s: %d calls visited %d of %d entries", what, calls, len(got), len(want))
		}
	}
	check("stored")
	for i := 0; i < 3000; i += 3 {
		var k [16]byte
		copy(k[:], fmt.Sprintf("key%d", i))
		l.Lock()
		if lc, ok, err := l.FindLocked(&k, len(fmt.Sprintf("key%d", i))); err == nil && ok {
			l.DeleteLocked(&k, len(fmt.Sprintf("key%d", i)), lc)
		}
		l.Unlock()
	}
	check("after deletes")
}
