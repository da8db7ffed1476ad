package emu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// watchedNS is the emulated namespace with its submissions watched: the
// largest batch since reset, and optionally the failChunk-th chunk Store
// (counting from 1) fails with EIO as a device would fail it, the rest of
// its chain cancelled.
type watchedNS struct {
	*Namespace
	mu        sync.Mutex
	maxBatch  int
	chunks    int // chunk Stores seen
	failChunk int // 0: none
	gets      int // chunk Retrieves seen
	failGet   int // 0: none; else the failGet-th chunk Retrieve fails with EIO
	windows   int // windows of chunk Retrieves seen
	// onWindow, if set, is called with the window's index (from 0) as
	// each window of chunk Retrieves is submitted.
	onWindow func(i int)
}

func (w *watchedNS) Do(ctx context.Context, ops ...*nvmekv.Op) error {
	w.mu.Lock()
	w.maxBatch = max(w.maxBatch, len(ops))
	if len(ops) > 1 && ops[0].Code == nvmekv.OpRetrieve && w.onWindow != nil {
		w.onWindow(w.windows)
	}
	if len(ops) > 1 && ops[0].Code == nvmekv.OpRetrieve {
		w.windows++
	}
	fail := -1
	failGet := -1
	for i, op := range ops {
		if op.Code == nvmekv.OpStore && op.Link {
			w.chunks++
			if w.chunks == w.failChunk {
				fail = i
			}
		}
		if op.Code == nvmekv.OpRetrieve && len(ops) > 1 { // a window's chunks (a header is read alone)
			w.gets++
			if w.gets == w.failGet {
				failGet = i
			}
		}
	}
	w.mu.Unlock()
	if failGet >= 0 {
		err := w.Namespace.Do(ctx, ops...)
		ops[failGet].Err = fmt.Errorf("injected: %w", syscall.EIO)
		return err
	}
	if fail < 0 {
		return w.Namespace.Do(ctx, ops...)
	}
	if err := w.Namespace.Do(ctx, ops[:fail]...); err != nil {
		return err
	}
	ops[fail].Err = fmt.Errorf("injected: %w", syscall.EIO)
	for _, op := range ops[fail+1:] {
		op.Err = nvmekv.ErrCanceled
	}
	return nil
}

func (w *watchedNS) reset(failChunk int) {
	w.mu.Lock()
	w.maxBatch, w.chunks, w.failChunk, w.gets, w.failGet, w.windows = 0, 0, failChunk, 0, 0, 0
	w.mu.Unlock()
}

// bigOptions: 256 KiB regions and 64 KiB device values, so a value of
// 2.5 MiB is 40 chunks.
func bigOptions(t testing.TB) Options {
	return Options{Path: t.TempDir() + "/ns", Capacity: 256 * (256 << 10), RegionBytes: 256 << 10,
		MaxValueBytes: 64 << 10, ReadSlots: 8, RingEntries: 64}
}

func bigValue(seed byte, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = seed + byte(i*13)
	}
	return v
}

// openWatched opens a KV on a watched namespace of bigOptions; Cleanup
// closes it.
func openWatched(t *testing.T) (*watchedNS, *nvmekv.KV) {
	w := &watchedNS{Namespace: mustOpen(t, bigOptions(t))}
	kv, err := nvmekv.NewKV(w, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return w, kv
}

// bigSize is a value of 40 chunks at bigOptions' 64 KiB device values.
const bigSize = 40*(64<<10-nvmekv.ChunkHdrBytes) - 100

// TestBigValueInWindows (nvmekv K14): a value of 40 chunks is written and
// read 8 chunks per submission, its header in a submission of its own, and
// reads back byte for byte, GetMany too. (What it allocates:
// TestBigValueAllocs.)
func TestBigValueInWindows(t *testing.T) {
	w, kv := openWatched(t)
	const size = bigSize
	for round := byte(0); round < 3; round++ {
		key, val := []byte(fmt.Sprintf("big-%d", round)), bigValue(round, size)
		w.reset(0)
		if err := kv.Put(ctx, key, val, nvmekv.Meta{Version: uint64(round)}); err != nil {
			t.Fatal(err)
		}
		putBatch := w.maxBatch
		w.reset(0)
		got, m, err := kv.Get(ctx, nil, key)
		if err != nil || m.Version != uint64(round) || !bytes.Equal(got, val) {
			t.Fatalf("round %d: Get: %d bytes (the value put: %v), meta %+v, %v", round, len(got), bytes.Equal(got, val), m, err)
		}
		if putBatch > 8 || w.maxBatch > 8 {
			t.Errorf("round %d: a submission of %d (put) / %d (get) commands; want at most 8", round, putBatch, w.maxBatch)
		}
	}
	items := kv.GetMany(ctx, [][]byte{[]byte("big-0"), []byte("big-2")})
	for i, seed := range []byte{0, 2} {
		if items[i].Err != nil || !bytes.Equal(items[i].Value, bigValue(seed, size)) {
			t.Fatalf("GetMany big-%d: %d bytes, %v", seed, len(items[i].Value), items[i].Err)
		}
	}
	if st := kv.Stats(); st.ChunksWritten != 3*40 || st.Puts != 3 {
		t.Errorf("stats: %d puts, %d chunks written; want 3 and 120", st.Puts, st.ChunksWritten)
	}
}

// TestBigValueGetFailsMidWay (nvmekv K14): a Get reads the next window
// while it checks and copies one; a chunk of a later window that fails
// fails the Get with the device's error, having waited for every read in
// flight, and the next Get reads the value back whole.
func TestBigValueGetFailsMidWay(t *testing.T) {
	w, kv := openWatched(t)
	key, val := []byte("big"), bigValue(7, bigSize)
	if err := kv.Put(ctx, key, val, nvmekv.Meta{Version: 1}); err != nil {
		t.Fatal(err)
	}
	for _, fail := range []int{3, 20, 40} { // the first window, a middle one, the last chunk
		w.reset(0)
		w.mu.Lock()
		w.failGet = fail
		w.mu.Unlock()
		if got, _, err := kv.Get(ctx, nil, key); !errors.Is(err, syscall.EIO) || len(got) != 0 {
			t.Fatalf("chunk %d failing: Get %d bytes, %v; want EIO", fail, len(got), err)
		}
		w.reset(0)
		got, _, err := kv.Get(ctx, nil, key)
		if err != nil || !bytes.Equal(got, val) {
			t.Fatalf("after chunk %d failed: Get %d bytes (the value: %v), %v", fail, len(got), bytes.Equal(got, val), err)
		}
		if w.maxBatch > 8 {
			t.Errorf("a submission of %d commands; want at most 8", w.maxBatch)
		}
	}
}

// TestBigValueFailedWindowHidesHeader (nvmekv K5, K14): a chunk of the
// third window fails: the Put returns the error and writes no header, so
// a fresh key stays absent and an overwritten key keeps its old value,
// through Put and PutMany alike; the next Put of the key succeeds.
func TestBigValueFailedWindowHidesHeader(t *testing.T) {
	w, kv := openWatched(t)
	var err error
	const size = 30 * (64 << 10)
	old, neu := bigValue(1, size), bigValue(2, size)
	if err := kv.Put(ctx, []byte("kept"), old, nvmekv.Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, many := range []bool{false, true} {
		for _, key := range []string{"kept", "fresh"} {
			w.reset(20)
			if many {
				items := []nvmekv.Item{{Key: []byte(key), Value: neu}}
				err = kv.PutMany(ctx, items)
			} else {
				err = kv.Put(ctx, []byte(key), neu, nvmekv.Meta{})
			}
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("PutMany %v of %s with chunk 20 failing: %v, want the EIO", many, key, err)
			}
			got, _, err := kv.Get(ctx, nil, []byte(key))
			switch {
			case key == "fresh" && !errors.Is(err, nvmekv.ErrKeyNotFound):
				t.Fatalf("PutMany %v: the failed put of a fresh key published it: %d bytes, %v", many, len(got), err)
			case key == "kept" && (err != nil || !bytes.Equal(got, old)):
				t.Fatalf("PutMany %v: after a failed overwrite the key reads %d bytes, %v; want its old value", many, len(got), err)
			}
		}
	}
	w.reset(0)
	if err := kv.Put(ctx, []byte("kept"), neu, nvmekv.Meta{}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := kv.Get(ctx, nil, []byte("kept")); err != nil || !bytes.Equal(got, neu) {
		t.Fatalf("after a put that succeeded: %d bytes, %v", len(got), err)
	}
}

// TestBigBatchLetsOthersIn (E26): while one Do stores 24 values of 1 MiB,
// another caller's lookups run between its Stores: a batch of two Exists
// sees the first of the 24 keys stored and the last not yet.
func TestBigBatchLetsOthersIn(t *testing.T) {
	o := Options{Path: t.TempDir() + "/ns", Capacity: 64 << 20, RegionBytes: 4 << 20, MaxValueBytes: 1 << 20, ReadSlots: 8, RingEntries: 64}
	ns := mustOpen(t, o)
	defer ns.Close()
	key := func(i int) []byte { return []byte(fmt.Sprintf("big-%d", i)) }
	ops := make([]*nvmekv.Op, 24)
	for i := range ops {
		ops[i] = &nvmekv.Op{Code: nvmekv.OpStore, Key: key(i), Buf: bigValue(byte(i), 1<<20)}
	}
	done := make(chan error, 1)
	go func() { done <- ns.Do(ctx, ops...) }()
	between := 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		probe := []*nvmekv.Op{{Code: nvmekv.OpExist, Key: key(0)}, {Code: nvmekv.OpExist, Key: key(23)}}
		if err := ns.Do(ctx, probe...); err != nil {
			t.Fatal(err)
		}
		if probe[0].Err == nil && errors.Is(probe[1].Err, nvmekv.ErrKeyNotFound) {
			between++
		}
	}
	for i, op := range ops {
		if op.Err != nil {
			t.Fatalf("Store %d: %v", i, op.Err)
		}
	}
	t.Logf("%d lookups ran between the batch's Stores", between)
	if between == 0 {
		t.Fatal("no lookup ran while the batch of 24 MiB was being stored: the batch held the namespace throughout")
	}
}

// TestPutManyKeepsOrderAroundBigValues (nvmekv K14): a PutMany that names
// a key twice, one value big (written alone, a window at a time) and one
// small (batched), leaves the later of the two, in either order: what was
// batched before a big value is written before it.
func TestPutManyKeepsOrderAroundBigValues(t *testing.T) {
	_, kv := openWatched(t)
	big, small := bigValue(3, 20*(64<<10)), []byte("small")
	for _, order := range [][]byte{big, small} {
		last := small
		if &order[0] == &small[0] {
			last = big
		}
		items := []nvmekv.Item{{Key: []byte("twice"), Value: order}, {Key: []byte("other"), Value: small}, {Key: []byte("twice"), Value: last}}
		if err := kv.PutMany(ctx, items); err != nil {
			t.Fatal(err)
		}
		if got, _, err := kv.Get(ctx, nil, []byte("twice")); err != nil || !bytes.Equal(got, last) {
			t.Fatalf("PutMany of %d then %d bytes under one key: reads %d bytes, %v; want the later", len(order), len(last), len(got), err)
		}
	}
}
