package emu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
)

// deadlockLimit bounds tests that used to hang: a deadlock fails with every
// goroutine's stack instead of blocking until go test's own timeout.
const deadlockLimit = 3 * time.Minute

// within runs fn and, if it has not returned by deadlockLimit, crashes the
// test binary with every goroutine's stack: a deadlocked batch would also
// hang the test's deferred Close, so failing the test is not enough.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	timer := time.AfterFunc(deadlockLimit, func() {
		buf := make([]byte, 1<<20)
		panic(fmt.Sprintf("%s: %s did not finish within %v (deadlock?):\n%s", t.Name(), what, deadlockLimit, buf[:runtime.Stack(buf, true)]))
	})
	defer timer.Stop()
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

func batchValue(i, n int) []byte {
	v := bytes.Repeat([]byte{byte(i), byte(i >> 8)}, n/2)
	binary.LittleEndian.PutUint32(v, uint32(i))
	return v
}

// pushOut stores enough filler to move everything written so far out of
// the DRAM write buffers, so later Retrieves read the file.
func pushOut(ns *Namespace) error {
	v := make([]byte, min(60<<10, ns.opts.MaxValueBytes))
	n := 4 * ns.opts.RegionBytes / len(v)
	for i := 0; i < n; i++ {
		if err := ns.Store(ctx, []byte(fmt.Sprintf("filler-%d", i)), v, 0); err != nil {
			return fmt.Errorf("filler store: %w", err)
		}
	}
	return ns.Flush(ctx)
}

// TestGetManyLarge: GetMany of 1,000 and 5,000 keys on a default-options
// store (ReadSlots 128, RingEntries 256) returns every value, from disk.
func TestGetManyLarge(t *testing.T) {
	for _, n := range []int{1000, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ns := mustOpen(t, Options{Path: t.TempDir() + "/ns"})
			kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer kv.Close()
			items := make([]nvmekv.Item, n)
			keys := make([][]byte, n)
			for i := range items {
				keys[i] = []byte(fmt.Sprintf("key-%06d", i))
				items[i] = nvmekv.Item{Key: keys[i], Value: batchValue(i, 1000)}
			}
			within(t, "PutMany", func() {
				if err := kv.PutMany(ctx, items); err != nil {
					t.Error(err)
				}
			})
			if err := pushOut(ns); err != nil {
				t.Fatal(err)
			}
			before := ns.Stats().DiskReads
			var got []nvmekv.Item
			within(t, "GetMany", func() { got = kv.GetMany(ctx, keys) })
			for i, it := range got {
				if it.Err != nil || !bytes.Equal(it.Value, items[i].Value) {
					t.Fatalf("key %d: err %v, %d bytes", i, it.Err, len(it.Value))
				}
			}
			if d := ns.Stats().DiskReads - before; d < uint64(n) {
				t.Fatalf("GetMany of %d keys made %d disk reads; the test meant to read the file", n, d)
			}
		})
	}
}

// TestDoManyRetrieves: one Do with far more Retrieves than ReadSlots and
// RingEntries (8 and 64 here), including reads too large for a slot.
func TestDoManyRetrieves(t *testing.T) {
	o := testOptions(t)
	o.Capacity = 256 * (64 << 10)
	o.MaxValueBytes = 60 << 10
	o.ReadSlots = 4 // big values are 60 KiB; slots are 64 KiB: both kinds fit or map
	ns := mustOpen(t, o)
	defer ns.Close()
	const n = 1000
	for i := 0; i < n; i++ {
		size := 100
		if i%97 == 0 {
			size = 60 << 10
		}
		if err := ns.Store(ctx, []byte(fmt.Sprintf("k%d", i)), batchValue(i, size), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	ops := make([]*nvmekv.Op, n)
	for i := range ops {
		ops[i] = &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: []byte(fmt.Sprintf("k%d", i)), Buf: make([]byte, 60<<10)}
	}
	within(t, "Do", func() {
		if err := ns.Do(ctx, ops...); err != nil {
			t.Error(err)
		}
	})
	for i, op := range ops {
		size := 100
		if i%97 == 0 {
			size = 60 << 10
		}
		if op.Err != nil || int(op.DW0) != size || !bytes.Equal(op.Buf[:size], batchValue(i, size)) {
			t.Fatalf("op %d: err %v, DW0 %d", i, op.Err, op.DW0)
		}
	}
}

// TestConcurrentBatches: 8 goroutines doing PutMany/GetMany of 300 keys at
// once on a default-options store complete (they used to deadlock on read
// slots) and read back what they wrote.
func TestConcurrentBatches(t *testing.T) {
	ns := mustOpen(t, Options{Path: t.TempDir() + "/ns"})
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	within(t, "8 concurrent PutMany/GetMany", func() {
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				items := make([]nvmekv.Item, 300)
				keys := make([][]byte, 300)
				for r := 0; r < rounds; r++ {
					for i := range items {
						keys[i] = []byte(fmt.Sprintf("g%d-k%d", g, i))
						items[i] = nvmekv.Item{Key: keys[i], Value: batchValue(g*1000+r*300+i, 4000)}
					}
					if err := kv.PutMany(ctx, items); err != nil {
						t.Errorf("g%d round %d PutMany: %v", g, r, err)
						return
					}
					if g == 0 {
						if err := pushOut(ns); err != nil { // later reads go to the file
							t.Errorf("g0: %v", err)
							return
						}
					}
					got := kv.GetMany(ctx, keys)
					for i, it := range got {
						if it.Err != nil || !bytes.Equal(it.Value, items[i].Value) {
							t.Errorf("g%d round %d key %d: err %v, %d bytes", g, r, i, it.Err, len(it.Value))
							return
						}
					}
				}
			}(g)
		}
		wg.Wait()
	})
}
