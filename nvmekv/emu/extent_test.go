package emu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
	"github.com/tiercache/tiercache/nvmekv/emu/rings"
)

// extValue is self-describing: key id and generation, then bytes that
// depend on both.
func extValue(id, gen, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(id*31 + gen*7 + i)
	}
	if n >= 8 {
		binary.LittleEndian.PutUint32(v, uint32(id))
		binary.LittleEndian.PutUint32(v[4:], uint32(gen))
	}
	return v
}

func extOptions(t testing.TB) Options {
	o := testOptions(t) // 16 regions of 64 KiB
	o.MaxValueBytes = 16 << 10
	return o
}

// checkAccounting: the per-region live counts and bytes add up to the
// index (every loc's size), so overwrites, deletes and reclaim keep them.
func checkAccounting(t *testing.T, ns *Namespace, what string) {
	t.Helper()
	if err := ns.lg.CheckAccounting(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestExtentRoundTrip: values of 4096, 8192, 8000 (extents), 4150 and
// small ones (inline), with overwrites and deletes, read back from the
// write buffers, from the file, after reopening from the checkpoint and
// after a scan.
func TestExtentRoundTrip(t *testing.T) {
	o := extOptions(t)
	ns := mustOpen(t, o)
	sizes := []int{4096, 8192, 8000, 4150, 100, 0, 3600, 1}
	model := map[string][]byte{}
	for i := 0; i < 60; i++ {
		k := fmt.Sprintf("key-%03d", i)
		v := extValue(i, 0, sizes[i%len(sizes)])
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatalf("store %s: %v", k, err)
		}
		model[k] = v
	}
	for i := 0; i < 60; i += 3 { // overwrite with another size class
		k := fmt.Sprintf("key-%03d", i)
		v := extValue(i, 1, sizes[(i+1)%len(sizes)])
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatal(err)
		}
		model[k] = v
	}
	for i := 1; i < 60; i += 7 {
		k := fmt.Sprintf("key-%03d", i)
		if err := ns.Delete(ctx, []byte(k)); err != nil {
			t.Fatal(err)
		}
		delete(model, k)
	}
	l, _ := ns.lg.Lookup(&[16]byte{'k', 'e', 'y', '-', '0', '1', '6'}, 7) // 16 % 8 = 0: 4096 bytes
	if !l.Ext() || l.VLen() != 4096 || l.Size() != logstore.ExtentHeaderBytes+4096 {
		t.Fatalf("a 4096-byte value is not in an extent: loc %x", uint64(l))
	}
	check := func(ns *Namespace, what string) {
		t.Helper()
		buf := make([]byte, 16<<10)
		for k, v := range model {
			n, err := ns.Retrieve(ctx, []byte(k), buf)
			if err != nil || n != len(v) || !bytes.Equal(buf[:n], v) {
				t.Fatalf("%s: %s: n=%d (want %d) err=%v", what, k, n, len(v), err)
			}
		}
		for i := 1; i < 60; i += 7 {
			if _, err := ns.Retrieve(ctx, []byte(fmt.Sprintf("key-%03d", i)), buf); !errors.Is(err, nvmekv.ErrKeyNotFound) {
				t.Fatalf("%s: deleted key %d: %v", what, i, err)
			}
		}
		if st := ns.Stats(); st.Items != len(model) {
			t.Fatalf("%s: %d items, model %d", what, st.Items, len(model))
		}
		checkAccounting(t, ns, what)
	}
	before := ns.Stats().BufferReads
	check(ns, "write buffer")
	if ns.Stats().BufferReads == before {
		t.Fatal("nothing was read from the write buffers")
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	fv := make([]byte, min(60<<10, o.MaxValueBytes))
	for i := 0; i < 4*o.RegionBytes/len(fv); i++ { // pushOut's fillers
		model[fmt.Sprintf("filler-%d", i)] = fv
	}
	before = ns.Stats().DiskReads
	check(ns, "file")
	if ns.Stats().DiskReads-before < uint64(len(model))-10 {
		t.Fatalf("only %d disk reads for %d keys", ns.Stats().DiskReads-before, len(model))
	}
	// A short buffer gets the value's prefix and its full length.
	small := make([]byte, 10)
	if n, err := ns.Retrieve(ctx, []byte("key-016"), small); err != nil || n != len(model["key-016"]) || !bytes.Equal(small, model["key-016"][:10]) {
		t.Fatalf("short buffer: n=%d err=%v", n, err)
	}
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	ns = mustOpen(t, o)
	if ns.Stats().Recovered != "checkpoint" {
		t.Fatalf("recovered by %q", ns.Stats().Recovered)
	}
	check(ns, "checkpoint")
	// Appending resumes in the last region (both ends) without clobbering it.
	for i := 100; i < 110; i++ {
		k, v := fmt.Sprintf("key-%03d", i), extValue(i, 2, sizes[i%len(sizes)])
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatal(err)
		}
		model[k] = v
	}
	check(ns, "after resume")
	ns.Close()
	o2 := o
	o2.CheckpointPath = "-"
	ns = mustOpen(t, o2)
	if st := ns.Stats(); st.Recovered != "scan" || st.TornTails != 0 {
		t.Fatalf("recovered by %q with %d torn tails", st.Recovered, st.TornTails)
	}
	check(ns, "scan")
	ns.Close()
}

// TestRetrieve4KOneRead: a Retrieve of a 4 KiB value from the file is one
// disk read of 4096 bytes.
func TestRetrieve4KOneRead(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	defer ns.Close()
	v := extValue(1, 0, 4096)
	if err := ns.Store(ctx, []byte("four-k"), v, 0); err != nil {
		t.Fatal(err)
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	st0 := ns.Stats()
	buf := make([]byte, 4096)
	for i := 0; i < 10; i++ {
		if n, err := ns.Retrieve(ctx, []byte("four-k"), buf); err != nil || n != 4096 || !bytes.Equal(buf, v) {
			t.Fatalf("retrieve: n=%d err=%v", n, err)
		}
	}
	st := ns.Stats()
	if d, b := st.DiskReads-st0.DiskReads, st.ReadBytes-st0.ReadBytes; d != 10 || b != 10*4096 {
		t.Fatalf("10 Retrieves of a 4 KiB value: %d disk reads of %d bytes, want 10 of 40960", d, b)
	}
}

// TestDirectExtentRead: an extent value that fills an O_DIRECT-aligned
// buffer exactly is read straight into it; a buffer that is not aligned, or
// a value that is not a whole number of blocks, goes through a read slot;
// every way returns the value, and no byte of the buffer past the value is
// written.
func TestDirectExtentRead(t *testing.T) {
	o := testOptions(t)
	o.MaxValueBytes = 8192
	ns := mustOpen(t, o)
	defer ns.Close()
	v4k, v4000, v8k := extValue(1, 0, 4096), extValue(2, 0, 4000), extValue(3, 0, 8192)
	for k, v := range map[string][]byte{"4k": v4k, "4000": v4000, "8k": v8k} {
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	page := func(n, shift int) []byte { // n bytes at a 4096-aligned address plus shift, 4096 spare bytes of capacity
		b := make([]byte, n+shift+3*4096)
		for i := range b {
			b[i] = 0x5a
		}
		for !aligned(b, 4096) {
			b = b[1:]
		}
		return b[shift : shift+n : shift+n+4096]
	}
	for _, tc := range []struct {
		key    string
		want   []byte
		buf    []byte
		direct bool
	}{
		{"4k", v4k, page(4096, 0), true},
		{"4k", v4k, page(8192, 0), true}, // a bigger buffer: the 4096 bytes go in its first block
		{"4k", v4k, page(4096, 8), false},
		{"8k", v8k, page(8192, 0), true},
		{"8k", v8k[:4096], page(4096, 0), true}, // a short buffer: its first block only
		{"4000", v4000, page(4096, 0), false},   // the read's tail would pass the value
	} {
		st0 := ns.Stats()
		n, err := ns.Retrieve(ctx, []byte(tc.key), tc.buf)
		st := ns.Stats()
		if err != nil && !errors.Is(err, nvmekv.ErrInvalidValueSize) {
			t.Fatalf("%s into %d bytes: %v", tc.key, len(tc.buf), err)
		}
		if !bytes.Equal(tc.buf[:len(tc.want)], tc.want) {
			t.Fatalf("%s into %d bytes: wrong bytes (n=%d)", tc.key, len(tc.buf), n)
		}
		for i, c := range tc.buf[len(tc.want):cap(tc.buf)] {
			if c != 0x5a {
				t.Fatalf("%s into %d bytes: byte %d past the value was written", tc.key, len(tc.buf), len(tc.want)+i)
			}
		}
		if st.DiskReads-st0.DiskReads != 1 || (st.DirectReads-st0.DirectReads == 1) != tc.direct {
			t.Fatalf("%s into %d bytes (aligned %v): %d disk reads, %d direct; want direct %v", tc.key, len(tc.buf),
				aligned(tc.buf, 4096), st.DiskReads-st0.DiskReads, st.DirectReads-st0.DirectReads, tc.direct)
		}
	}
}

// crashDrop closes ns the way a crash would (no flush, no checkpoint).
func crashDrop(ns *Namespace) {
	ns.release()
}

// TestTornExtent: a record whose header is durable but whose extent is not
// (zero, or other bytes) is dropped by the scan, with everything after it
// in its region; earlier records survive and appending resumes without
// overwriting their extents.
func TestTornExtent(t *testing.T) {
	for _, how := range []string{"zero", "flip"} {
		t.Run(how, func(t *testing.T) {
			o := extOptions(t)
			ns := mustOpen(t, o)
			v1, v2, v3 := extValue(1, 0, 4096), extValue(2, 0, 8000), extValue(3, 0, 200)
			ns.Store(ctx, []byte("k1"), v1, 0)
			if err := ns.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			ns.Store(ctx, []byte("k2"), v2, 0)
			ns.Store(ctx, []byte("k3"), v3, 0)
			if err := ns.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			l, _ := ns.lg.Lookup(&[16]byte{'k', '2'}, 2)
			off := ns.lg.RegionOff(l.Region()) + int64(l.ExtOff())
			crashDrop(ns)
			f, err := os.OpenFile(o.Path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			blk := make([]byte, 8192)
			if how == "flip" {
				f.ReadAt(blk, off)
				blk[5000] ^= 0x40
			}
			if _, err := f.WriteAt(blk, off); err != nil {
				t.Fatal(err)
			}
			f.Close()
			ns = mustOpen(t, o)
			buf := make([]byte, 8192)
			if n, err := ns.Retrieve(ctx, []byte("k1"), buf); err != nil || !bytes.Equal(buf[:n], v1) {
				t.Fatalf("k1 before the torn record: n=%d err=%v", n, err)
			}
			for _, k := range []string{"k2", "k3"} {
				if _, err := ns.Retrieve(ctx, []byte(k), buf); !errors.Is(err, nvmekv.ErrKeyNotFound) {
					t.Fatalf("%s at or after the torn record: %v", k, err)
				}
			}
			if st := ns.Stats(); st.Recovered != "scan" || st.TornTails != 1 {
				t.Fatalf("recovered by %s with %d torn tails", st.Recovered, st.TornTails)
			}
			v4 := extValue(4, 0, 4096)
			ns.Store(ctx, []byte("k4"), v4, 0)
			if err := ns.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			crashDrop(ns)
			ns = mustOpen(t, o)
			defer ns.Close()
			for k, v := range map[string][]byte{"k1": v1, "k4": v4} {
				if n, err := ns.Retrieve(ctx, []byte(k), buf); err != nil || !bytes.Equal(buf[:n], v) {
					t.Fatalf("%s after resuming: n=%d err=%v", k, n, err)
				}
			}
		})
	}
}

// TestCacheReclaimExtents: a full log of mixed extent and inline values
// reclaims regions, reports each dropped key once, keeps the accounting,
// and every key not reported reads back exactly.
func TestCacheReclaimExtents(t *testing.T) {
	o := extOptions(t)
	reclaimed := map[string]int{}
	o.OnReclaim = func(k [16]byte) { reclaimed[string(bytes.TrimRight(k[:], "\x00"))]++ }
	ns := mustOpen(t, o)
	defer ns.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := []int{4096, 8192, 300, 8000, 4150}
	model := map[string][]byte{}
	for i := 0; i < 600; i++ { // ~2.9 MB into 1 MiB
		id := rng.IntN(400)
		k := fmt.Sprintf("r%04d", id)
		v := extValue(id, i, sizes[i%len(sizes)])
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatal(err)
		}
		model[k] = v
		delete(reclaimed, k) // a later Store brings it back
	}
	ns.Flush(ctx)
	if ns.Stats().Reclaimed == 0 {
		t.Fatal("no region was reclaimed")
	}
	checkAccounting(t, ns, "after reclaim")
	buf := make([]byte, 16<<10)
	for k, v := range model {
		n, err := ns.Retrieve(ctx, []byte(k), buf)
		switch c := reclaimed[k]; {
		case c > 1:
			t.Fatalf("%s reported %d times", k, c)
		case c == 1 && !errors.Is(err, nvmekv.ErrKeyNotFound):
			t.Fatalf("%s reported reclaimed but reads: %v", k, err)
		case c == 0 && (err != nil || !bytes.Equal(buf[:n], v)):
			t.Fatalf("%s: n=%d err=%v", k, n, err)
		}
	}
}

// TestStrictEvacuatesExtents: Strict mode moves extent records forward
// with the inline ones; everything survives overwrites and reopening.
func TestStrictEvacuatesExtents(t *testing.T) {
	o := extOptions(t)
	o.Mode = Strict
	ns := mustOpen(t, o)
	model := map[string][]byte{}
	for i := 0; i < 40; i++ { // ~190 KB that stays live
		k, v := fmt.Sprintf("base-%d", i), extValue(i, 0, []int{4096, 8000, 500}[i%3])
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatal(err)
		}
		model[k] = v
	}
	for i := 0; i < 1500; i++ { // ~6 MB of overwrites into 1 MiB
		k := fmt.Sprintf("hot-%d", i%40)
		v := extValue(1000+i%40, i, []int{4096, 300, 8192, 4150}[i%4])
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatalf("overwrite %d (live %d B): %v", i, ns.Stats().LiveBytes, err)
		}
		model[k] = v
	}
	if ns.Stats().Evacuated == 0 {
		t.Fatal("no region was evacuated")
	}
	check := func(ns *Namespace, what string) {
		t.Helper()
		buf := make([]byte, 16<<10)
		for k, v := range model {
			n, err := ns.Retrieve(ctx, []byte(k), buf)
			if err != nil || !bytes.Equal(buf[:n], v) {
				t.Fatalf("%s: %s: n=%d err=%v", what, k, n, err)
			}
		}
		checkAccounting(t, ns, what)
	}
	checkReopened(t, o, ns, check)
}

// TestConcurrentExtents: goroutines store 4 KiB values (extents) while
// others' writes reclaim regions under their reads (run it with -race); a
// read returns the value just stored or, once reclaimed, not found.
func TestConcurrentExtents(t *testing.T) {
	o := testOptions(t)
	ns := mustOpen(t, o)
	defer ns.Close()
	inGoroutines(t, 8, func(g int) error {
		buf := make([]byte, 4096)
		for i := 0; i < 150; i++ {
			id := g*100 + i%20
			k := []byte(fmt.Sprintf("c%d", id))
			v := extValue(id, i, 4096)
			if err := ns.Store(ctx, k, v, 0); err != nil {
				return err
			}
			if i%10 == 0 {
				if err := pushOut(ns); err != nil {
					return err
				}
			}
			n, err := ns.Retrieve(ctx, k, buf)
			if errors.Is(err, nvmekv.ErrKeyNotFound) {
				continue
			}
			if err != nil || !bytes.Equal(buf[:n], v) {
				return fmt.Errorf("g%d i%d: n=%d err=%v", g, i, n, err)
			}
		}
		return nil
	})
}

// TestExtentReadRacesReclaim: the log wraps (the region of the value
// being read is reclaimed and rewritten on disk) between a Retrieve's
// lookup and its disk read. The read must not return the new bytes as the
// value: it is retried and finds the key gone (reported to OnReclaim).
func TestExtentReadRacesReclaim(t *testing.T) {
	o := testOptions(t) // 16 regions of 64 KiB, Cache mode
	reclaimed := map[string]int{}
	o.OnReclaim = func(k [16]byte) { reclaimed[string(bytes.TrimRight(k[:], "\x00"))]++ }
	var ns *Namespace
	armed := overwriteOnRead(t, &o, &ns, 4096)
	ns = mustOpen(t, o)
	defer ns.Close()
	v := extValue(7, 7, 4096)
	if err := ns.Store(ctx, []byte("victim"), v, 0); err != nil {
		t.Fatal(err)
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	*armed = true
	buf := make([]byte, 4096)
	n, err := ns.Retrieve(ctx, []byte("victim"), buf)
	if *armed {
		t.Fatal("the Retrieve did not read the disk")
	}
	if !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("Retrieve across a reclaim of its region: n=%d err=%v (first bytes %x)", n, err, buf[:8])
	}
	if reclaimed["victim"] != 1 {
		t.Fatalf("victim reported reclaimed %d times", reclaimed["victim"])
	}
	if st := ns.Stats(); st.ReadRetries == 0 {
		t.Fatal("no read was retried")
	}
}

// overwriteOnRead sets o.Fault to overwrite the whole log (overwriteLog
// on *ns) at the first disk read of n bytes (0: of any size) once the
// returned flag is set; the flag is cleared when it does.
func overwriteOnRead(t *testing.T, o *Options, ns **Namespace, n int) *bool {
	armed := new(bool)
	o.Fault = func(write bool, off int64, size int) syscall.Errno {
		if write || !*armed || (n != 0 && size != n) {
			return 0
		}
		*armed = false
		overwriteLog(t, *ns)
		return 0
	}
	return armed
}

// overwriteLog stores and flushes more than the whole log of a testOptions
// store (16 regions of 64 KiB), so every region is reclaimed and rewritten.
func overwriteLog(t *testing.T, ns *Namespace) {
	other := bytes.Repeat([]byte{0xee}, 4096)
	for i := 0; i < 20*(64<<10)/4096; i++ {
		if err := ns.Store(ctx, []byte(fmt.Sprintf("w%d", i)), other, 0); err != nil {
			t.Errorf("store while a read waits: %v", err)
		}
	}
	if err := ns.Flush(ctx); err != nil {
		t.Error(err)
	}
}

// TestQuickRing: a lone Retrieve takes the quick ring; while a read is in
// flight on the main ring (played here by its counter), and for a wave of
// more than rings.QuickReads, reads take the main ring; every way returns the
// value and the counters come back to zero.
func TestQuickRing(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	defer ns.Close()
	if ns.rg.Quick() == nil {
		skipf(t, "no quick ring: the kernel refused SINGLE_ISSUER|DEFER_TASKRUN, so there is one plain ring")
	}
	vals := map[string][]byte{}
	for i := range 8 {
		k := fmt.Sprint("q", i)
		vals[k] = extValue(i, 0, 4096)
		if err := ns.Store(ctx, []byte(k), vals[k], 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	read := func(keys ...string) (disk, quick uint64) {
		t.Helper()
		disk, quick, _ = retrieveAll(t, ns, keys, vals)
		return disk, quick
	}
	if d, q := read("q0"); d != 1 || q != 1 {
		t.Errorf("a lone Retrieve: %d disk reads, %d on the quick ring; want 1 and 1", d, q)
	}
	if d, q := read("q1", "q2", "q3", "q4"); d != 4 || q != 4 {
		t.Errorf("a wave of 4: %d disk reads, %d on the quick ring; want 4 and 4", d, q)
	}
	if d, q := read("q0", "q1", "q2", "q3", "q4"); d != 5 || q != 0 {
		t.Errorf("a wave of 5: %d disk reads, %d on the quick ring; want 5 and 0", d, q)
	}
	mainReads := ns.rg.Lane(rings.QuickReads + 1) // a read in flight on the main ring
	d, q := read("q5")
	mainReads.Release()
	if d != 1 || q != 0 {
		t.Errorf("a lone Retrieve while the main ring reads: %d disk reads, %d on the quick ring; want 1 and 0", d, q)
	}
	if m, qb := ns.rg.InFlight(); m != 0 || qb != 0 {
		t.Errorf("in-flight counters %d (main) and %d (quick) after every read completed, want 0", m, qb)
	}
}
