package logstore

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// TestTagSlotLayout (E8): a tag slot gives back the tag and the Loc it
// was made of, for stores of every size a Loc names, read in a segment of
// depth d0 or deeper; d0 is what the slot's bits leave to the prefix (0
// for a store of 255 regions of 4 MiB, 15 for the largest); a Loc the
// layout cannot hold panics, and a store a Loc cannot name is refused.
func TestTagSlotLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 10))
	for _, c := range []struct {
		regions, regionBytes int
		d0                   uint
	}{
		{255, 4 << 20, 0}, {256, 4 << 20, 1}, {512, 4 << 20, 2}, {2048, 4 << 20, 4}, {19200, 4 << 20, 7},
		{1 << 15, 4 << 20, 8}, {3, MinRegionBytes, 0}, {maxRegions, MaxRegionBytes, 15}, {1023, 64 << 10, 0},
	} {
		y, err := newSlotLayout(c.regions, c.regionBytes)
		if err != nil || y.d0 != c.d0 {
			t.Fatalf("%d regions of %d bytes: d0 %d, %v; want %d", c.regions, c.regionBytes, y.d0, err, c.d0)
		}
		for i := 0; i < 20_000; i++ {
			tag := rng.Uint32()
			r, off := rng.IntN(c.regions), 16*rng.IntN(c.regionBytes/16)
			switch i % 4 { // the extremes
			case 0:
				r, off = c.regions-1, c.regionBytes-16
			case 1:
				r, off = 0, 0
			}
			l := mkLoc(r, 1+rng.IntN(16), off, 16*(1+rng.IntN(maxRecordBytes/16)))
			if i%4 == 0 {
				l = mkLoc(r, 16, off, maxRecordBytes&^15)
			}
			s := y.pack(tag, l)
			for _, depth := range []uint{y.d0, y.d0 + 3} {
				lo := uint32(uint64(tag) >> (32 - depth) << (32 - depth)) // the prefix of a segment holding tag
				if s.empty() || y.tag(&s, lo) != tag || y.loc(&s) != l {
					t.Fatalf("%d regions of %d bytes: tag %#x Loc %#x gave back tag %#x Loc %#x (empty %v) at depth %d",
						c.regions, c.regionBytes, tag, uint64(l), y.tag(&s, lo), uint64(y.loc(&s)), s.empty(), depth)
				}
			}
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("%d regions of %d bytes: a Loc in region %d packed", c.regions, c.regionBytes, 1<<y.rBits)
				}
			}()
			y.pack(1, mkLoc(1<<y.rBits-1, 16, 0, 64))
		}()
	}
	for _, c := range [][2]int{{0, 4 << 20}, {maxRegions + 1, 4 << 20}, {8, MaxRegionBytes * 2}} {
		if _, err := newSlotLayout(c[0], c[1]); !errors.Is(err, ErrBadOptions) {
			t.Fatalf("%d regions of %d bytes: %v, want ErrBadOptions", c[0], c[1], err)
		}
	}
}

// TestTagFalsePositiveRate (E8): in an index of N random tags, a lookup
// of a random tag finds an entry (a key it would check in vain, were the
// tag an absent key's) with probability ≈ N/2^32: the count over M
// lookups lies within a factor 1.5 of N·M/2^32 (one seeded run: the
// expectation is 233 at N = M = 1M, 21 at 300k under -short), with
// slots holding whole tags and (alone under -short) under prefixes of at
// least 9 bits.
func TestTagFalsePositiveRate(t *testing.T) {
	n, lays := 1_000_000, []*slotLayout{testLay, deepLay}
	if testing.Short() {
		n, lays = 300_000, lays[1:] // the race run: 5 s a layout there
	}
	for _, lay := range lays {
		rng := rand.New(rand.NewPCG(8, 11))
		x := newTagIndex(0, lay, nil)
		for i := 0; i < n; i++ {
			x.add(rng.Uint32(), mkLoc(i%1000+1, 16, 16*(i/1000%4096), 64))
		}
		hits := 0
		for i := 0; i < n; i++ {
			c := x.cands(rng.Uint32())
			if s, _ := c.next(); s != nil {
				hits++
			}
		}
		want := float64(n) * float64(n) / (1 << 32)
		if r := float64(hits) / want; r < 1/1.5 || r > 1.5 {
			t.Fatalf("d0 %d: %d of %d lookups of random tags found an entry, want about %.0f", lay.d0, hits, n, want)
		}
		t.Logf("d0 %d: %d of %d lookups found an entry (N/2^32 predicts %.0f)", lay.d0, hits, n, want)
	}
}

// TestLogDeepSlotLayout (E8, E29, E37): a store of 2^16 regions (a sparse
// 4 GiB file) packs its Locs in 51 bits, so its slots hold a tag's low 29
// bits and every segment's prefix is at least d0 = 3 bits long: inline
// and extent records stored, overwritten and deleted are found where they
// are, before a close, from the checkpoint and by a scan.
func TestLogDeepSlotLayout(t *testing.T) {
	o := testOptions(t)
	o.Capacity, o.Sparse = 1<<16*int64(o.RegionBytes), true
	l := mustOpenLog(t, o)
	if l.lay.d0 != 3 {
		t.Fatalf("d0 %d, want 3", l.lay.d0)
	}
	l.churn(t, rand.New(rand.NewPCG(8, 12)), 3000, 6000, 6, 300, 50)
	keyOf := churnKey
	want := map[string]Loc{}
	for i := 0; i < 3000; i++ {
		if loc, ok := l.lookup(keyOf(i)); ok {
			want[keyOf(i)] = loc
		}
	}
	check := func(l *testLog, how string) {
		t.Helper()
		if got := l.Stats().Recovered; got != how {
			t.Fatalf("recovered by %q, want %q", got, how)
		}
		for _, s := range l.idx.tags.dir {
			if s.depth < 3 {
				t.Fatalf("%s: a segment of depth %d", how, s.depth)
			}
		}
		if l.idx.len() != len(want) {
			t.Fatalf("%s: %d keys, want %d", how, l.idx.len(), len(want))
		}
		for i := 0; i < 3000; i++ {
			got, ok := l.lookup(keyOf(i))
			if w, live := want[keyOf(i)]; ok != live || got != w {
				t.Fatalf("%s: %s at %#x (found %v), want %#x (live %v)", how, keyOf(i), got, ok, w, live)
			}
		}
	}
	check(l, "fresh")
	l.close(t)
	l = mustOpenLog(t, o)
	check(l, "checkpoint")
	l.close(t)
	o.CheckpointPath = "-"
	l = mustOpenLog(t, o)
	defer l.close(t)
	check(l, "scan")
}
