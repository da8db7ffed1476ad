package logstore

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestIndexModel checks the Robin Hood index against a map through
// inserts, updates, deletes, conditional deletes and growth, with the
// tables' own invariants checked along the way (checkIndex).
func TestIndexModel(t *testing.T) {
	x := indexOf(tableFor(10, nil), nil) // small: it grows (and drains) many times
	model := map[[16]byte]Loc{}
	rng := rand.New(rand.NewPCG(3, 4))
	key := func() [16]byte {
		var k [16]byte
		binary.LittleEndian.PutUint64(k[:], uint64(rng.IntN(5000)))
		if rng.IntN(2) == 0 {
			k[15] = 1 // structured keys: high half mostly zero
		}
		return k
	}
	for i := 0; i < 200000; i++ {
		k := key()
		switch rng.IntN(10) {
		case 0, 1, 2, 3, 4:
			l := mkLoc(rng.IntN(1000), 16, 16*rng.IntN(1000), 64)
			old := x.put(&k, l)
			if old != model[k] {
				t.Fatalf("op %d put: old %x, model %x", i, old, model[k])
			}
			model[k] = l
		case 5, 6:
			if old := x.del(&k); old != model[k] {
				t.Fatalf("op %d del: %x, model %x", i, old, model[k])
			}
			delete(model, k)
		case 7:
			l := model[k]
			if rng.IntN(2) == 0 {
				l++
			}
			if got := x.delIf(&k, l); got != (l != 0 && model[k] == l) {
				t.Fatalf("op %d delIf = %v", i, got)
			}
			if model[k] == l {
				delete(model, k)
			}
		default:
			l, ok := x.get(&k)
			if want, wok := model[k]; ok != wok || l != want {
				t.Fatalf("op %d get = %x %v, model %x %v", i, l, ok, want, wok)
			}
		}
		if x.len() != len(model) {
			t.Fatalf("op %d: count %d, model %d", i, x.len(), len(model))
		}
		if i%97 == 0 {
			checkIndex(t, x)
		}
	}
	if x.moved == 0 {
		t.Fatal("no entry was ever moved between tables: the model never grew the index")
	}
	n := 0
	x.each(func(a, b uint64, l Loc) {
		if model[joinKey(a, b)] != l {
			t.Fatalf("each: entry %x not in model", l)
		}
		n++
	})
	if n != len(model) {
		t.Fatalf("each saw %d entries, model %d", n, len(model))
	}
}

func TestLocPacking(t *testing.T) {
	for _, c := range []struct{ r, kl, off, size int }{{0, 1, 64, 48}, {maxRegions - 1, 16, 64<<20 - 16, 4<<20 - 16}, {12345, 7, 4096, 4160}} {
		l := mkLoc(c.r, c.kl, c.off, c.size)
		if l == 0 || l.Region() != c.r || l.KLen() != c.kl || l.Off() != c.off || l.Size() != c.size {
			t.Errorf("mkLoc%+v → region %d klen %d off %d size %d", c, l.Region(), l.KLen(), l.Off(), l.Size())
		}
		if l.Ext() {
			t.Errorf("mkLoc%+v is an extent Loc", c)
		}
	}
	for _, c := range []struct{ r, kl, ext, vlen int }{{0, 1, 4096, 4096}, {maxRegions - 1, 16, 64<<20 - 4096, 4<<20 - 1}, {777, 3, 8192, 8000}} {
		l := mkExtLoc(c.r, c.kl, c.ext, c.vlen)
		if !l.Ext() || l.Region() != c.r || l.KLen() != c.kl || l.ExtOff() != c.ext || l.VLen() != c.vlen || l.Size() != extRecBytes+alignUp(c.vlen) {
			t.Errorf("mkExtLoc%+v → ext %v region %d klen %d extent %d vlen %d size %d", c, l.Ext(), l.Region(), l.KLen(), l.ExtOff(), l.VLen(), l.Size())
		}
	}
}

// FuzzWalkRegion: recovery never panics on arbitrary region bytes and
// returns only records whose CRC matched, inline ones before the extents
// and extents below one another.
func FuzzWalkRegion(f *testing.F) {
	img := make([]byte, 8192)
	testSB.putRegionHdr(img, 9)
	putRecord(img[regionHdr:], kindStore, 9, []byte("key"), []byte("value"))
	f.Add(img[:1024], uint64(9))
	f.Add(make([]byte, 4096), uint64(1))
	// Inline, then an extent record whose 4096-byte value is the last block.
	ext := make([]byte, 12288)
	testSB.putRegionHdr(ext, 9)
	putRecord(ext[regionHdr:], kindStore, 9, []byte("a"), []byte("small"))
	v := make([]byte, 4096)
	for i := range v {
		v[i] = byte(i * 7)
	}
	putExtRecord(ext, regionHdr+recSize(5), 9, []byte("b"), 8192, v)
	f.Add(ext, uint64(9))
	torn := append([]byte(nil), ext...)
	torn[8192+100] ^= 1 // extent not as written: dropped
	f.Add(torn, uint64(9))
	f.Fuzz(func(t *testing.T, b []byte, seq uint64) {
		low, fwd := len(b), 0
		walkRegion(b, seq, 4096, func(off int, r *rec) {
			if off < fwd || off+r.Size() > low && off+recHdrBytes+r.vlen > low {
				t.Fatalf("record at %d of %d bytes overlaps earlier ones (forward end %d, extents from %d)", off, r.Size(), fwd, low)
			}
			if _, ok := parseRecord(b, off, seq, 4096, low); !ok {
				t.Fatal("walk returned a record that does not parse")
			}
			if r.kind == kindExtent {
				if r.ext < alignUp(off+extRecBytes) || r.ext+extBytes(r.vlen) > low {
					t.Fatalf("extent at %d of %d bytes outside [%d, %d)", r.ext, r.vlen, alignUp(off+extRecBytes), low)
				}
				low = r.ext
			}
			fwd = off + r.Size()
		})
	})
}

// TestIndexOffHeapTable: a table of 2 MiB or more is mapped off the Go heap
// (a smaller one stays on it), and entries survive growing from one mapping
// into the next while the GC runs and unmaps the old one.
func TestIndexOffHeapTable(t *testing.T) {
	before := offHeapBytes.Load()
	if small := newIndex(1000, nil); small.cur.off != nil {
		t.Fatalf("a %d-byte table is off the heap", small.bytes())
	}
	x := newIndex(hugeTableBytes/24, nil)
	if x.cur.off == nil {
		t.Fatalf("a %d-byte table is on the heap, want off-heap from %d bytes", x.bytes(), hugeTableBytes)
	}
	const keys = 300_000 // past maxLoad: the table grows at least once
	n0 := x.cur.n
	stop := make(chan struct{})
	gcDone := make(chan struct{})
	go func() { // collect (and unmap what no index holds) all along, growth included
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	for i := uint64(1); i <= keys; i++ {
		k := joinKey(i*0x9e3779b97f4a7c15, i)
		x.put(&k, mkLoc(int(i%1000)+1, 16, 16*int(i%1000), 64))
	}
	close(stop)
	<-gcDone
	if x.cur.n == n0 {
		t.Fatalf("the table never grew (%d slots for %d keys)", x.cur.n, keys)
	}
	x.drain() // drop a table still draining, if any
	if x.old != nil {
		t.Fatal("the old table is not empty after draining it whole")
	}
	runtime.GC()
	runtime.GC()
	for i := uint64(1); i <= keys; i++ {
		k := joinKey(i*0x9e3779b97f4a7c15, i)
		if l, ok := x.get(&k); !ok || l != mkLoc(int(i%1000)+1, 16, 16*int(i%1000), 64) {
			t.Fatalf("key %d after growing: %v %v", i, l, ok)
		}
	}
	// Cleanups run after a GC finds a table's holder unreachable.
	waitMapped := func(want int64, what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); offHeapBytes.Load()-before != want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d bytes mapped for tables, want %d (%s)", offHeapBytes.Load()-before, want, what)
			}
			runtime.GC()
		}
	}
	waitMapped(int64(cap(x.cur.off.mem)), "only the live table: those grown out of are unmapped")
	x = nil
	waitMapped(0, "none once the index is garbage")
}

// checkIndex checks the index's structure: every table's count is its
// occupied slots, every entry sits within its probe sequence with no gap
// (Robin Hood), the old table's slots below mig are empty, and no key is in
// both tables.
func checkIndex(t *testing.T, x *index) {
	t.Helper()
	check := func(name string, tb *table) {
		n := 0
		for i, s := range tb.slots {
			if s.l == 0 {
				continue
			}
			n++
			for d, j := 0, tb.home(s.k0, s.k1); j != i; d++ {
				if tb.slots[j].l == 0 {
					t.Fatalf("%s: the entry at slot %d has an empty slot %d in its probe sequence", name, i, j)
				}
				if j++; j == tb.n {
					j = 0
				}
			}
		}
		if n != tb.count {
			t.Fatalf("%s: %d entries, count %d", name, n, tb.count)
		}
	}
	check("cur", x.cur)
	if x.old == nil {
		return
	}
	check("old", x.old)
	for i := 0; i < x.mig; i++ {
		if x.old.slots[i].l != 0 {
			t.Fatalf("old table: slot %d below mig %d holds an entry", i, x.mig)
		}
	}
	for _, s := range x.old.slots {
		if s.l != 0 && x.cur.find(s.k0, s.k1) >= 0 {
			t.Fatalf("key %x %x is in both tables", s.k0, s.k1)
		}
	}
}

// TestIndexGrowsIncrementally: E25. A new index is small (minExpected); it
// grows with its keys, and the put that fills a table moves no more than
// migrateStep of the full table's entries into the new one: the rest move
// a few slots per later change, lookups finding every key in either table
// meanwhile, until the old table is empty and dropped.
func TestIndexGrowsIncrementally(t *testing.T) {
	x := newIndex(0, nil)
	if x.bytes() > 24*(minExpected*10/9+2) {
		t.Fatalf("a new index takes %d bytes, want about %d (minExpected)", x.bytes(), 24*minExpected*10/9)
	}
	key := func(i int) [16]byte { return joinKey(uint64(i)*0x9e3779b97f4a7c15, uint64(i)) }
	loc := func(i int) Loc { return mkLoc(i%1000, 16, 16*(i%1000), 64) }
	i := 0
	for ; x.old == nil; i++ {
		k := key(i)
		x.put(&k, loc(i))
	}
	full := x.old.count + x.cur.count
	if x.cur.count > migrateStep+1 || x.old.count < full-migrateStep-1 {
		t.Fatalf("the put that filled the table left %d keys in the new table and %d in the full one: it moved more than %d", x.cur.count, x.old.count, migrateStep)
	}
	grows := 1
	for ; i < 200_000; i++ {
		k := key(i)
		draining := x.old != nil
		x.put(&k, loc(i))
		if !draining && x.old != nil {
			grows++
			if x.cur.count > migrateStep+1 {
				t.Fatalf("growth %d: the put that filled the table moved %d keys", grows, x.cur.count-1)
			}
		}
		if i%1000 == 0 {
			checkIndex(t, x)
			for j := 0; j <= i; j += 97 {
				k := key(j)
				if l, ok := x.get(&k); !ok || l != loc(j) {
					t.Fatalf("after %d puts, key %d: %x %v", i+1, j, uint64(l), ok)
				}
			}
		}
	}
	if x.len() != 200_000 || grows < 5 {
		t.Fatalf("%d keys, %d growths", x.len(), grows)
	}
	if max := int(200_000 / maxLoad * 1.5 * 24 * 1.05); x.bytes() > max+24*200_000/2 {
		t.Fatalf("%d keys take %d bytes of index", x.len(), x.bytes())
	}
}
