package emu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// cutNS is a namespace that, once cut is set, runs only the chunk stores
// of the next Do and drops the rest: a Put chain that a crash interrupted
// after its chunks reached the store and before its header did.
type cutNS struct {
	*Namespace
	cut bool
}

var errCut = errors.New("cut short")

func (n *cutNS) Do(ctx context.Context, ops ...*nvmekv.Op) error {
	if !n.cut {
		return n.Namespace.Do(ctx, ops...)
	}
	n.cut = false
	return errors.Join(n.Namespace.Do(ctx, ops[:len(ops)-1]...), errCut)
}

// TestChunkedOverwriteCutShortKeepsOldValue: an overwrite of a chunked
// value cut short before its header was written leaves the old record
// whole (nvmekv K11): its chunks are in the other chunk set. Deletes and
// further overwrites find the record's chunks in whichever set it uses,
// and replaced chunks are deleted once the new header is written.
func TestChunkedOverwriteCutShortKeepsOldValue(t *testing.T) {
	ns := &cutNS{Namespace: mustOpen(t, testOptions(t))}
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	k := []byte("big")
	val := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 10000+i*100) } // 3+ chunks of 4 KiB
	for i := 0; i < 6; i++ {
		if err := kv.Put(ctx, k, val(i), nvmekv.Meta{Version: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		ns.cut = true
		if err := kv.Put(ctx, k, val(100), nvmekv.Meta{}); err == nil {
			t.Fatal("a cut-short put succeeded")
		}
		got, m, err := kv.Get(ctx, nil, k)
		if err != nil || !bytes.Equal(got, val(i)) || m.Version != uint64(i+1) {
			t.Fatalf("round %d: after an overwrite cut short the key reads %d bytes, version %d, %v; want the old %d bytes", i, len(got), m.Version, err, len(val(i)))
		}
		items := []nvmekv.Item{{Key: k, Value: val(i), Meta: nvmekv.Meta{Version: uint64(i + 1)}}, {Key: []byte(fmt.Sprint("o", i)), Value: val(i)}}
		if err := kv.PutMany(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	// Only the live chunks remain: one header and 3 chunks for "big".
	before := ns.Stats().Items
	if err := kv.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kv.Get(ctx, nil, k); !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("after Delete: %v", err)
	}
	if gone := before - ns.Stats().Items; gone != 4 {
		t.Errorf("Delete of a 3-chunk record removed %d device records, want 4 (replaced chunks left behind?)", gone)
	}
}

// failingWrites is testOptions whose region writes fail with EIO while
// fail is set.
func failingWrites(t *testing.T) (Options, *atomic.Bool) {
	fail := new(atomic.Bool)
	o := testOptions(t)
	o.Fault = func(write bool, off int64, n int) syscall.Errno {
		if write && fail.Load() {
			return syscall.EIO
		}
		return 0
	}
	return o, fail
}

// key16 is s zero-padded to a 16-byte device key.
func key16(s string) []byte { k := make([]byte, 16); copy(k, s); return k }

// TestFailedFlushUndoesIndex: Stores and Deletes whose Flush failed (the
// namespace turns read-only, E7) are not seen by later reads: every key
// reads what the last completed Flush left, as after a restart (E21).
func TestFailedFlushUndoesIndex(t *testing.T) {
	o, fail := failingWrites(t)
	ns := mustOpen(t, o)
	defer ns.Close()
	key := key16
	for _, k := range []string{"kept", "overwritten", "deleted"} {
		if err := ns.Store(ctx, key(k), []byte("old "+k), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := ns.Store(ctx, key("overwritten"), []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Delete(ctx, key("deleted")); err != nil {
		t.Fatal(err)
	}
	if err := ns.Store(ctx, key("fresh"), []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Flush with failing writes: %v", err)
	}
	for _, k := range []string{"kept", "overwritten", "deleted"} {
		buf := make([]byte, 64)
		n, err := ns.Retrieve(ctx, key(k), buf)
		if err != nil || string(buf[:n]) != "old "+k {
			t.Errorf("%s after a failed Flush reads %q, %v; want %q", k, buf[:n], err, "old "+k)
		}
	}
	if _, err := ns.Retrieve(ctx, key("fresh"), make([]byte, 64)); !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Errorf("a key stored only by a failed Flush reads: %v", err)
	}
	if st := ns.Stats(); st.Undone != 3 {
		t.Errorf("Stats.Undone = %d, want 3", st.Undone)
	}
	if st := ns.Stats(); st.Items != 3 || st.FullKeyItems != 3 { // logstore E31 through the undo
		t.Errorf("after the undo: %d items, %d of 16-byte keys; want 3, 3", st.Items, st.FullKeyItems)
	}
}

// TestUndoForgetsReclaimedRegion checks E21 across a reclaim: a key whose
// journaled old record lies in a region the log then writes again goes
// back to absent after a failed write (as a restart would find it), never
// onto the overwritten bytes.
func TestUndoForgetsReclaimedRegion(t *testing.T) {
	o, fail := failingWrites(t)
	ns := mustOpen(t, o)
	defer ns.Close()
	if err := ns.Store(ctx, []byte("k"), []byte("durable"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ns.Store(ctx, []byte("k"), []byte("newer"), 0); err != nil { // journaled: old = the durable record
		t.Fatal(err)
	}
	for i := 0; ns.Stats().Reclaimed == 0; i++ { // no Flush: the log wraps over k's region
		if err := ns.Store(ctx, []byte(fmt.Sprintf("f%04d", i)), make([]byte, 3000), 0); err != nil {
			t.Fatal(err)
		}
		if i > 10000 {
			t.Fatal("the log never wrapped")
		}
	}
	fail.Store(true)
	ns.Store(ctx, []byte("x"), []byte("y"), 0)
	if err := ns.Flush(ctx); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Flush with failing writes: %v", err)
	}
	buf := make([]byte, 64)
	if n, err := ns.Retrieve(ctx, []byte("k"), buf); !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("k after the failed write reads %q, %v; want not found (its durable record's region was written again)", buf[:n], err)
	}
}

// TestLeftoverChunksSwept: nvmekv K13. A put cut short after its header
// was written and before its cleanup ran (a crash) leaves the replaced
// record's chunks; the next put that writes fewer chunks in that set
// deletes the ones past its own, so the namespace holds only the live
// record's chunks.
func TestLeftoverChunksSwept(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	k := []byte("big")
	five := bytes.Repeat([]byte("a"), 18000)                    // 5 chunks of 4 KiB
	two := bytes.Repeat([]byte("b"), 6000)                      // 2 chunks
	if err := kv.Put(ctx, k, five, nvmekv.Meta{}); err != nil { // set 0
		t.Fatal(err)
	}
	if err := kv.Put(ctx, k, five, nvmekv.Meta{}); err != nil { // set 1; set 0 deleted
		t.Fatal(err)
	}
	h := nvmekv.DefaultHasher(k)
	for i := uint32(0); i < 5; i++ { // set 0's chunks back, as a crash before that cleanup left them
		ck := nvmekv.ChunkKeyIn(h, 0, i)
		if err := ns.Store(ctx, ck[:nvmekv.ChunkKeyBytes], []byte("leftover"), 0); err != nil {
			t.Fatal(err)
		}
	}
	before := ns.Stats().Items
	if err := kv.Put(ctx, k, two, nvmekv.Meta{}); err != nil { // set 0 again, 2 chunks
		t.Fatal(err)
	}
	if got, _, err := kv.Get(ctx, nil, k); err != nil || !bytes.Equal(got, two) {
		t.Fatalf("Get after the put: %d bytes, %v", len(got), err)
	}
	// before: header + set 1's 5 + 5 leftovers; after: header + 2 chunks.
	if after := ns.Stats().Items; after != before-8 {
		t.Errorf("device records %d → %d, want %d: leftover chunks stayed", before, after, before-8)
	}
	if n := kv.Stats().LeftoverChunks; n != 3 {
		t.Errorf("LeftoverChunks = %d, want 3", n)
	}
}

// TestInlinePutReplacingChunksDeletesThem (nvmekv K22): an inline value
// PutMany'd with Replaces over a chunked record (a plain one, and a
// pieced one) deletes its chunks once its header is written: the device
// then holds the header alone, and the value reads back; without Replaces
// the chunks stay (the Caveats), which is why a strict store sets it.
func TestInlinePutReplacingChunksDeletesThem(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	big := bytes.Repeat([]byte("a"), 18000) // 5 chunks of 4 KiB
	small := []byte("small")
	pieces := []nvmekv.Piece{{End: 4000}, {End: 8000}, {End: 12000}, {End: 16000}, {End: 18000}}
	for _, tc := range []struct {
		name     string
		pieces   []nvmekv.Piece
		replaces bool
		left     int
	}{{"chunked", nil, true, 0}, {"pieced", pieces, true, 0}, {"chunked without Replaces", nil, false, 5}} {
		k := []byte("k-" + tc.name)
		before := ns.Stats().Items
		if err := kv.PutMany(ctx, []nvmekv.Item{{Key: k, Value: big, Pieces: tc.pieces}}); err != nil {
			t.Fatal(err)
		}
		if err := kv.PutMany(ctx, []nvmekv.Item{{Key: k, Value: small, Replaces: tc.replaces}}); err != nil {
			t.Fatal(err)
		}
		if got, _, err := kv.Get(ctx, nil, k); err != nil || !bytes.Equal(got, small) {
			t.Fatalf("%s: Get after the put: %q, %v", tc.name, got, err)
		}
		if got, want := ns.Stats().Items-before, 1+tc.left; got != want {
			t.Errorf("%s: the key takes %d device records, want %d (its header and %d chunks)", tc.name, got, want, tc.left)
		}
	}
}
