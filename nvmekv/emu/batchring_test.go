package emu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/rings"
)

// batchOptions is testOptions with waves large enough for a batch ring.
func batchOptions(t testing.TB) Options {
	o := testOptions(t)
	o.ReadSlots = 64
	return o
}

// TestBatchRing: a wave of rings.BatchMin reads or more, extents (read straight
// into the caller's buffers) and inline records (through registered read
// slots) mixed, runs on the batch ring and returns every value; a smaller
// wave, or one while the main ring reads, does not; the ring goes back to
// the pool.
func TestBatchRing(t *testing.T) {
	ns := mustOpen(t, batchOptions(t))
	defer ns.Close()
	if ns.rg.BatchRings() == 0 {
		skipf(t, "no batch ring could be made")
	}
	want := map[string][]byte{}
	var keys []string
	for i := range 2 * rings.BatchMin {
		k := fmt.Sprint("b", i)
		n := 4096
		if i%4 == 0 {
			n = 100 + i // inline: a read slot, then header and CRC checks
		}
		want[k] = extValue(i, 1, n)
		if err := ns.Store(ctx, []byte(k), want[k], 0); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	if d, _, b := retrieveAll(t, ns, keys, want); d != uint64(len(keys)) || b != d {
		t.Errorf("a wave of %d: %d disk reads, %d on the batch ring; want %d and %d", len(keys), d, b, len(keys), len(keys))
	}
	if d, _, b := retrieveAll(t, ns, keys[:rings.BatchMin-1], want); d != uint64(rings.BatchMin-1) || b != 0 {
		t.Errorf("a wave of %d: %d disk reads, %d on the batch ring; want %d and 0", rings.BatchMin-1, d, b, rings.BatchMin-1)
	}
	mainReads := ns.rg.Lane(rings.QuickReads + 1) // a read in flight on the main ring
	d, _, b := retrieveAll(t, ns, keys, want)
	mainReads.Release()
	if d != uint64(len(keys)) || b != 0 {
		t.Errorf("a wave of %d while the main ring reads: %d disk reads, %d on the batch ring; want %d and 0", len(keys), d, b, len(keys))
	}
	if n := ns.rg.BatchRings(); n != rings.BatchRings {
		t.Errorf("%d batch rings free after every read completed, want %d", n, rings.BatchRings)
	}
	if m, _ := ns.rg.InFlight(); m != 0 {
		t.Errorf("main ring in-flight counter %d after every read completed, want 0", m)
	}
}

// TestBatchReadRacesReclaim: the whole log is overwritten while a wave on
// the batch ring is being issued; every read sees its region was reclaimed
// and none returns the newer bytes (E2): each key is not found.
func TestBatchReadRacesReclaim(t *testing.T) {
	o := batchOptions(t)
	var ns *Namespace
	armed := overwriteOnRead(t, &o, &ns, 0)
	ns = mustOpen(t, o)
	defer ns.Close()
	if ns.rg.BatchRings() == 0 {
		skipf(t, "no batch ring could be made")
	}
	ops := make([]*nvmekv.Op, rings.BatchMin)
	for i := range ops {
		k := []byte(fmt.Sprint("victim", i))
		if err := ns.Store(ctx, k, extValue(i, 2, 4096), 0); err != nil {
			t.Fatal(err)
		}
		ops[i] = &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: k, Buf: make([]byte, 4096)}
	}
	if err := pushOut(ns); err != nil {
		t.Fatal(err)
	}
	st0 := ns.Stats()
	*armed = true
	if err := ns.Do(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	if *armed {
		t.Fatal("the Retrieves did not read the disk")
	}
	for i, op := range ops {
		if !errors.Is(op.Err, nvmekv.ErrKeyNotFound) {
			t.Fatalf("Retrieve %d across a reclaim of its region: %v (first bytes %x)", i, op.Err, op.Buf[:8])
		}
	}
	st := ns.Stats()
	if st.BatchReads == st0.BatchReads || st.ReadRetries == st0.ReadRetries {
		t.Fatalf("batch ring reads %d, retries %d: the race was not run on the batch ring", st.BatchReads-st0.BatchReads, st.ReadRetries-st0.ReadRetries)
	}
}

// TestBatchRingRaces: Dos of 64 Retrieves (on the batch ring) and lone
// Retrieves race two writers that overwrite the same keys, extents and
// inline records, and reclaim regions; every value read is one that was
// stored for its key, whole, or the key is not found.
func TestBatchRingRaces(t *testing.T) {
	const keys, batch = 300, 64
	o := batchOptions(t)
	o.Capacity = 64 * int64(o.RegionBytes) // room for every key: most reads go to the disk
	ns := mustOpen(t, o)
	defer ns.Close()
	if ns.rg.BatchRings() == 0 {
		skipf(t, "no batch ring could be made")
	}
	for k := range keys {
		if err := ns.Store(ctx, []byte(fmt.Sprint("k", k)), extValue(k, 0, 4096), 0); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	check := func(k int, op *nvmekv.Op) error {
		if errors.Is(op.Err, nvmekv.ErrKeyNotFound) {
			return nil
		}
		if op.Err != nil {
			return fmt.Errorf("key %d: %w", k, op.Err)
		}
		n := int(op.DW0)
		if n != 4096 && n != 300 {
			return fmt.Errorf("key %d: value of %d bytes, none of that size was stored", k, n)
		}
		id, gen := int(binary.LittleEndian.Uint32(op.Buf)), int(binary.LittleEndian.Uint32(op.Buf[4:]))
		if id != k || !bytes.Equal(op.Buf[:n], extValue(id, gen, n)) {
			return fmt.Errorf("key %d: read a value that was not stored for it (id %d, gen %d, %d bytes)", k, id, gen, n)
		}
		return nil
	}
	inGoroutines(t, 4, func(g int) error {
		rng := rand.New(rand.NewPCG(uint64(g), 9))
		switch g {
		case 0, 1: // writers
			defer stop.Store(true)
			for i := range 1500 {
				k := rng.IntN(keys)
				n := 4096
				if i%3 == 0 {
					n = 300
				}
				if err := ns.Store(ctx, []byte(fmt.Sprint("k", k)), extValue(k, 1+g*10000+i, n), 0); err != nil {
					return err
				}
				if i%40 == 0 {
					if err := ns.Flush(ctx); err != nil {
						return err
					}
				}
			}
		case 2: // batches
			ops := make([]*nvmekv.Op, batch)
			ids := make([]int, batch)
			for i := range ops {
				ops[i] = &nvmekv.Op{Code: nvmekv.OpRetrieve, Buf: make([]byte, 4096)}
			}
			for !stop.Load() {
				for i, op := range ops {
					ids[i] = rng.IntN(keys)
					op.Key = []byte(fmt.Sprint("k", ids[i]))
				}
				if err := ns.Do(ctx, ops...); err != nil {
					return err
				}
				for i, op := range ops {
					if err := check(ids[i], op); err != nil {
						return err
					}
				}
			}
		case 3: // lone Retrieves
			op := &nvmekv.Op{Code: nvmekv.OpRetrieve, Buf: make([]byte, 4096)}
			for !stop.Load() {
				k := rng.IntN(keys)
				op.Key = []byte(fmt.Sprint("k", k))
				if err := ns.Do(ctx, op); err != nil {
					return err
				}
				if err := check(k, op); err != nil {
					return err
				}
			}
		}
		return nil
	})
	st := ns.Stats()
	t.Logf("%d reads on the batch ring of %d from the disk, %d retried, %d regions reclaimed", st.BatchReads, st.DiskReads, st.ReadRetries, st.Reclaimed)
	if st.BatchReads == 0 || st.Reclaimed == 0 {
		t.Fatalf("batch ring reads %d, regions reclaimed %d: the race did not run", st.BatchReads, st.Reclaimed)
	}
}
