package logstore

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestIndexModel checks the Robin Hood index against a map through
// inserts, updates, deletes, conditional deletes and growth.
func TestIndexModel(t *testing.T) {
	x := newIndex(10)
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
		if x.count != len(model) {
			t.Fatalf("op %d: count %d, model %d", i, x.count, len(model))
		}
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
	if small := newIndex(1000); small.table != nil {
		t.Fatalf("a %d-byte table is off the heap", small.bytes())
	}
	x := newIndex(hugeTableBytes / 24)
	if x.table == nil {
		t.Fatalf("a %d-byte table is on the heap, want off-heap from %d bytes", x.bytes(), hugeTableBytes)
	}
	const keys = 300_000 // past maxLoad: the table grows at least once
	n0 := x.n
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
	if x.n == n0 {
		t.Fatalf("the table never grew (%d slots for %d keys)", x.n, keys)
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
	waitMapped(int64(cap(x.table.mem)), "only the live table: those grown out of are unmapped")
	x = nil
	waitMapped(0, "none once the index is garbage")
}
