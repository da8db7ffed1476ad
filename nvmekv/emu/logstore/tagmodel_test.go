package logstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// TestTagSlotBytes (E8): a tag slot is 10 bytes, a key slot 24.
func TestTagSlotBytes(t *testing.T) {
	if n := unsafe.Sizeof(tslot{}); n != 10 || tslotBytes != 10 {
		t.Fatalf("a tag slot is %d bytes (tslotBytes %d), want 10", n, tslotBytes)
	}
	if n := unsafe.Sizeof(slot{}); n != 24 {
		t.Fatalf("a key slot is %d bytes, want 24", n)
	}
	x := newTagIndex(100_000, testLay, nil)
	if per := float64(x.bytes()) / 100_000; per > 10/tagMaxLoad+0.1 {
		t.Fatalf("a tag index for 100,000 keys takes %.2f bytes a key, want %.2f", per, 10/tagMaxLoad)
	}
}

// TestTagCollisionModel (E30, E31): with tags cut to 3 bits, so that most keys
// share their tag with dozens of others, random Stores (new keys and
// overwrites, inline values and extents), Deletes, Retrieves, Exists,
// Cache-mode reclaim or Strict-mode evacuation, and reopens (from the
// checkpoint, or by a scan) against a map: a key's lookup never serves
// another key's value, a Store never replaces and a Delete never removes
// another key's entry, and a command costs at most one record-header
// check per entry of its tag. Stats.FullKeyItems equals the model's
// count of 16-byte keys after every step and every reopen (E31).
func TestTagCollisionModel(t *testing.T) {
	for _, mode := range []Mode{Cache, Strict} {
		t.Run(mode.String(), func(t *testing.T) { tagCollisionModel(t, mode) })
	}
}

func tagCollisionModel(t *testing.T, mode Mode) {
	defer func(m uint32) { tagMask = m }(tagMask)
	tagMask = 0xe0000000
	o := testOptions(t)
	o.Mode = mode
	o.Capacity = 6 * int64(o.RegionBytes) // reclaims (or evacuates) often
	l := mustOpenLog(t, o)
	defer func() { l.close(t) }()
	rng := rand.New(rand.NewPCG(21, 1))
	model := map[string][]byte{}
	const keys = 300
	// Every third key is 16 bytes long (as nvmekv.KV's record headers
	// are): Stats.FullKeyItems counts those (E31).
	name := func(i int) string {
		if i%3 == 0 {
			return fmt.Sprintf("full-key-%07d", i)
		}
		return fmt.Sprintf("k%d", i)
	}
	fullKeys := func() int {
		n := 0
		for s := range model {
			if len(s) == 16 {
				n++
			}
		}
		return n
	}
	dkey := func(s string) (k [16]byte) { copy(k[:], s); return k }
	// cands is how many entries share the key's tag now: the most header
	// checks a command of that key may make.
	cands := func(k *[16]byte) uint64 {
		c := l.idx.tags.cands(tagOf(k))
		n := uint64(0)
		for tb, _ := c.next(); tb != nil; tb, _ = c.next() {
			n++
		}
		return n
	}
	checks := func() uint64 { return l.tagChecks.Load() }
	reclaimed := func() {
		for _, k := range l.TakeReclaimedLocked() {
			delete(model, string(bytes.TrimRight(k[:], "\x00")))
		}
	}
	get := func(s string) ([]byte, bool) {
		t.Helper()
		k := dkey(s)
		l.RLock()
		c0, n := checks(), cands(&k)
		loc, ok, err := l.CandidateLocked(&k, len(s))
		if c := checks() - c0; err != nil || c > n {
			l.RUnlock()
			t.Fatalf("a Retrieve of %s checked %d headers for %d entries of its tag (%v)", s, c, n, err)
		}
		if !ok {
			l.RUnlock()
			return nil, false
		}
		buf := make([]byte, o.MaxValueBytes)
		res, dw0, buffered := l.ReadBufferedLocked(loc, &k, len(s), buf)
		seq := l.SeqLocked(loc.Region())
		l.RUnlock()
		if !buffered {
			res, dw0 = readRecord(t, l, loc, seq, &k, len(s), buf)
		}
		if res == nvmekv.Status(0, nvmekv.SCKeyNotExists, true) {
			return nil, false // the candidate was another key's record
		}
		if res != 0 {
			t.Fatalf("retrieve %s at %#x: result %#x", s, uint64(loc), res)
		}
		return buf[:dw0], true
	}
	checkAll := func(what string) {
		t.Helper()
		for i := 0; i < keys; i++ {
			v, ok := get(name(i))
			want, wok := model[name(i)]
			if ok != wok || !bytes.Equal(v, want) {
				t.Fatalf("%s: %s = %d bytes %v, model %d bytes %v", what, name(i), len(v), ok, len(want), wok)
			}
		}
		if st := l.Stats(); st.Items != len(model) || st.FullKeyItems != fullKeys() {
			t.Fatalf("%s: %d items, %d of 16-byte keys; model %d, %d", what, st.Items, st.FullKeyItems, len(model), fullKeys())
		}
		if err := l.CheckAccounting(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var tot modelTotals
	for op := 0; op < 3000; op++ {
		s := name(rng.IntN(keys))
		k := dkey(s)
		switch r := rng.IntN(20); {
		case r < 9: // Store
			n := 8 + rng.IntN(400)
			if rng.IntN(10) == 0 {
				n = 4096 // an extent
			}
			v := testValue(rng.IntN(1000), op, n)
			func() {
				l.Lock()
				defer l.Unlock() // also when a check fails: the log is closed after
				c0, nc := checks(), cands(&k)
				st := l.StoreLocked(&k, len(s), v)
				if c := checks() - c0; c > nc {
					t.Fatalf("op %d: a Store of %s checked %d headers for %d entries of its tag", op, s, c, nc)
				}
				if st == nvmekv.Status(0, nvmekv.SCCapacityExceeded, true) && mode == Strict {
					return // full: nothing changed
				}
				if st != 0 {
					t.Fatalf("op %d: store %s: %#x", op, s, st)
				}
				model[s] = v
				reclaimed()
			}()
		case r < 13: // Delete
			func() {
				l.Lock()
				defer l.Unlock()
				c0, nc := checks(), cands(&k)
				loc, ok, err := l.FindLocked(&k, len(s))
				if err != nil {
					t.Fatal(err)
				}
				if _, want := model[s]; ok != want {
					t.Fatalf("op %d: Find %s = %v, model %v", op, s, ok, want)
				}
				if ok {
					if st := l.DeleteLocked(&k, len(s), loc); st != 0 {
						t.Fatalf("op %d: delete %s: %#x", op, s, st)
					}
					delete(model, s)
					reclaimed()
				}
				if c := checks() - c0; c > nc {
					t.Fatalf("op %d: a Delete of %s checked %d headers for %d entries of its tag", op, s, c, nc)
				}
			}()
		case r < 19: // Retrieve
			v, ok := get(s)
			if want, wok := model[s]; ok != wok || !bytes.Equal(v, want) {
				t.Fatalf("op %d: %s = %d bytes %v, model %d bytes %v", op, s, len(v), ok, len(want), wok)
			}
		default: // reopen: from the checkpoint, or (every other time) by a scan
			if op%7 == 0 {
				checkAll(fmt.Sprintf("op %d before reopening", op))
				tot.add(l.Stats())
				l.close(t)
				oo := o
				if rng.IntN(2) == 0 {
					oo.CheckpointPath = "-"
				}
				l = mustOpenLog(t, oo)
				checkAll(fmt.Sprintf("op %d reopened by %s", op, l.Stats().Recovered))
			}
		}
		if n := l.Stats().FullKeyItems; n != fullKeys() {
			t.Fatalf("op %d: %d items of 16-byte keys, model %d", op, n, fullKeys())
		}
		if op%1000 == 0 {
			checkAll(fmt.Sprintf("op %d", op))
		}
	}
	checkAll("end")
	tot.add(l.Stats())
	st := tot
	t.Logf("reclaimed %d regions, evacuated %d; %d header checks, %d from the device, %d collisions", st.Reclaimed, st.Evacuated, st.TagChecks, st.TagReads, st.TagCollisions)
	if mode == Strict && st.Evacuated == 0 {
		t.Fatal("Strict mode never evacuated a region")
	}
	if st.Reclaimed == 0 || st.TagCollisions == 0 || st.TagReads == 0 {
		t.Fatalf("the model never reclaimed (%d), met a collision (%d) or read a header from the device (%d)", st.Reclaimed, st.TagCollisions, st.TagReads)
	}
}

// readRecord reads the record at loc from the device as the read path
// does, and checks it as it does (an extent, found by its full key, is
// served as read).
func readRecord(t *testing.T, l *testLog, loc Loc, seq uint64, k *[16]byte, kl int, buf []byte) (int32, uint32) {
	t.Helper()
	off, n := l.RegionOff(loc.Region()), 0
	if loc.Ext() {
		off, n = off+int64(loc.ExtOff()), extBytes(loc.VLen())
	} else {
		off, n = off+int64(loc.Off()), loc.Size()
	}
	start := off &^ (blockBytes - 1)
	size := alignUp(int(off-start) + n)
	mem, err := dev.MapBuffer(size)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.UnmapBuffer(mem)
	if err := l.d.ReadAt(mem, start); err != nil {
		t.Fatal(err)
	}
	skip := int(off - start)
	if loc.Ext() {
		return 0, uint32(copy(buf, mem[skip:skip+loc.VLen()]))
	}
	return CopyValue(mem[:skip+n], skip, seq, k, kl, buf, l.RegionBytes())
}

// modelTotals sums the counters of the logs a model opened in turn.
type modelTotals struct{ Reclaimed, Evacuated, TagChecks, TagReads, TagCollisions uint64 }

func (m *modelTotals) add(st Stats) {
	m.Reclaimed += st.Reclaimed
	m.Evacuated += st.Evacuated
	m.TagChecks += st.TagChecks
	m.TagReads += st.TagReads
	m.TagCollisions += st.TagCollisions
}

// TestTagOfIsTheIndexTag (E8): TagOf is the tag the index files a key
// under, and SetTagMask cuts it as the tagMask seam does.
func TestTagOfIsTheIndexTag(t *testing.T) {
	k := [16]byte{1, 2, 3}
	if TagOf(&k) != tagOf(&k) {
		t.Fatal("TagOf differs from tagOf")
	}
	prev := SetTagMask(0xe0000000)
	defer SetTagMask(prev)
	if tg := TagOf(&k); tg&^0xe0000000 != 0 || tg != tagOf(&k) {
		t.Fatalf("with the mask 0xe0000000 the tag is %#x", tg)
	}
}
