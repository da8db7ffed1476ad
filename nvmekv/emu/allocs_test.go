//go:build !race

// The race detector drops sync.Pool items on purpose, so allocation counts
// mean nothing under it.

package emu

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// TestRetrieveAllocs (E12): a successful Retrieve allocates nothing once
// warm, read from the file (a 4 KiB extent and an inline record) or from a
// write buffer, and neither does a Do of several Retrieves.
func TestRetrieveAllocs(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	defer ns.Close()
	v4k, small := extValue(1, 0, 4096), extValue(2, 0, 300)
	for k, v := range map[string][]byte{"four-k": v4k, "small": small} {
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	if err := ns.Store(ctx, []byte("buffered"), v4k, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	k4k, ksmall, kbuf := []byte("four-k"), []byte("small"), []byte("buffered") // made once: a conversion in the loop would allocate
	ops := []*nvmekv.Op{
		{Code: nvmekv.OpRetrieve, Key: []byte("four-k"), Buf: make([]byte, 4096)},
		{Code: nvmekv.OpRetrieve, Key: []byte("small"), Buf: make([]byte, 300)},
		{Code: nvmekv.OpRetrieve, Key: []byte("buffered"), Buf: make([]byte, 4096)},
	}
	st0 := ns.Stats()
	for _, c := range []struct {
		name string
		fn   func() error
	}{
		{"extent from the file", func() error { return retrieveEq(ns, k4k, buf, v4k) }},
		{"inline from the file", func() error { return retrieveEq(ns, ksmall, buf[:300], small) }},
		{"from a write buffer", func() error { return retrieveEq(ns, kbuf, buf, v4k) }},
		{"Do of 3", func() error {
			if err := ns.Do(ctx, ops...); err != nil {
				return err
			}
			for _, op := range ops {
				if op.Err != nil {
					return op.Err
				}
			}
			return nil
		}},
	} {
		var err error
		if a := testing.AllocsPerRun(200, func() {
			if e := c.fn(); e != nil && err == nil {
				err = e
			}
		}); err != nil || a != 0 {
			t.Errorf("%s: %v allocations per Retrieve (err %v), want 0", c.name, a, err)
		}
	}
	if st := ns.Stats(); st.DiskReads == st0.DiskReads || st.BufferReads == st0.BufferReads {
		t.Fatalf("the Retrieves did not read both the file and a buffer: %+v", st)
	}
}

// retrieveEq retrieves key into buf and checks it got want.
func retrieveEq(ns *Namespace, key, buf, want []byte) error {
	n, err := ns.Retrieve(ctx, key, buf)
	if err == nil && (n != len(want) || !bytes.Equal(buf[:n], want)) {
		err = fmt.Errorf("Retrieve %q: %d bytes, not the %d stored", key, n, len(want))
	}
	return err
}

// allocated is the bytes the heap allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBigValueAllocs (nvmekv K14): once warm, a Put of a 40-chunk value
// allocates less than a quarter of it (its chunk buffers are lent again)
// and a Get not much more than the value it returns (its result is sized
// once); before, each took a fresh buffer per chunk, and a Get's result
// doubled as chunks arrived.
func TestBigValueAllocs(t *testing.T) {
	_, kv := openWatched(t)
	for round := byte(0); round < 3; round++ {
		key, val := []byte(fmt.Sprintf("big-%d", round)), bigValue(round, bigSize)
		putAlloc := allocated(func() {
			if err := kv.Put(ctx, key, val, nvmekv.Meta{}); err != nil {
				t.Fatal(err)
			}
		})
		getAlloc := allocated(func() {
			if got, _, err := kv.Get(ctx, nil, key); err != nil || !bytes.Equal(got, val) {
				t.Fatalf("Get: %d bytes, %v", len(got), err)
			}
		})
		t.Logf("round %d: put of %d bytes allocated %d, get %d", round, bigSize, putAlloc, getAlloc)
		if round > 0 && (putAlloc > bigSize/4 || getAlloc > bigSize+bigSize/4) {
			t.Errorf("round %d: put allocated %d bytes, get %d, of a %d-byte value; want under a quarter and 1.25 times", round, putAlloc, getAlloc, bigSize)
		}
	}
}

// TestGetManyIntoAllocs (nvmekv K15): once warm, a PutMany of 64 values of
// 1.5 KiB and a GetManyInto of them with their sizes, into the caller's
// buffers, each allocate less than half the values' bytes (their
// bookkeeping, about 400 bytes a key): the header records' buffers are
// lent again and the values land where the caller wants them. Before,
// each header record and each value returned was fresh memory: more than
// the values' bytes for each call.
func TestGetManyIntoAllocs(t *testing.T) {
	_, kv := openWatched(t)
	const n, size = 64, 1536
	keys, sizes, dsts := make([][]byte, n), make([]int, n), make([][]byte, n)
	items := make([]nvmekv.Item, n)
	buf := make([]byte, n*size)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("vec:%04d", i))
		items[i] = nvmekv.Item{Key: keys[i], Value: extValue(i, 0, size)}
		sizes[i] = size
	}
	for round := range 3 {
		putAlloc := allocated(func() {
			if err := kv.PutMany(ctx, items); err != nil {
				t.Fatal(err)
			}
		})
		var got []nvmekv.Item
		getAlloc := allocated(func() {
			for i := range dsts {
				dsts[i] = buf[i*size : i*size : (i+1)*size]
			}
			got = kv.GetManyInto(ctx, keys, sizes, dsts)
		})
		for i, it := range got {
			if it.Err != nil || !bytes.Equal(it.Value, items[i].Value) || &it.Value[0] != &buf[i*size] {
				t.Fatalf("round %d key %d: %d bytes, %v, or not in the caller's buffer", round, i, len(it.Value), it.Err)
			}
		}
		t.Logf("round %d: PutMany of %d values allocated %d bytes, GetManyInto %d", round, n, putAlloc, getAlloc)
		if round > 0 && (putAlloc > n*size/2 || getAlloc > n*size/2) {
			t.Errorf("round %d: PutMany allocated %d bytes, GetManyInto %d, for %d bytes of values; want under half", round, putAlloc, getAlloc, n*size)
		}
	}
}
