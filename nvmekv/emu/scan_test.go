package emu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
)

// walkUserKeys walks kv's user keys from tag 0 with a random n per call
// until the end, and returns how often each key came back; it checks
// that next grows and every key's tag lies in the range of its call.
func walkUserKeys(t *testing.T, kv *nvmekv.KV, rng *rand.Rand) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for from := uint64(0); from < logstore.TagSpace; {
		var keys []string
		next, err := kv.ScanUserKeys(ctx, from, 1+rng.IntN(40), func(key []byte, _ nvmekv.Meta) {
			keys = append(keys, string(key))
		})
		if err != nil {
			t.Fatalf("ScanUserKeys from %#x: %v", from, err)
		}
		if next <= from || next > logstore.TagSpace {
			t.Fatalf("ScanUserKeys from %#x returned next %#x", from, next)
		}
		for _, k := range keys {
			dk := nvmekv.DefaultHasher([]byte(k))
			if tg := uint64(logstore.TagOf(&dk)); tg < from || tg >= next {
				t.Fatalf("key %q of tag %#x returned by the call for [%#x, %#x)", k, tg, from, next)
			}
			seen[k]++
		}
		from = next
	}
	return seen
}

// TestScanUserKeysModel (nvmekv K17, logstore E32, E33): random Puts
// (inline, extent-sized and chunked values), overwrites and Deletes of
// user keys against a map; a walk of ScanUserKeys from 0 with random n
// returns exactly the live keys, once each, and UserKeys equals their
// number after every command; also after reopening from the checkpoint
// and by a scan, and with tags cut to 3 bits so that many keys share a
// tag.
func TestScanUserKeysModel(t *testing.T) {
	for _, mask := range []uint32{^uint32(0), 0xe0000000} {
		t.Run(fmt.Sprintf("mask%#x", mask), func(t *testing.T) {
			defer logstore.SetTagMask(logstore.SetTagMask(mask))
			scanUserKeysModel(t)
		})
	}
}

func scanUserKeysModel(t *testing.T) {
	o := testOptions(t)
	o.Capacity = 1024 * int64(o.RegionBytes) // 64 MiB: nothing is reclaimed
	ns := mustOpen(t, o)
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { kv.Close() }()
	rng := rand.New(rand.NewPCG(33, 1))
	model := map[string][]byte{}
	check := func(what string) {
		t.Helper()
		seen := walkUserKeys(t, kv, rng)
		for k, c := range seen {
			if _, ok := model[k]; !ok || c != 1 {
				t.Fatalf("%s: the walk returned %q %d times; live %v", what, k, c, ok)
			}
		}
		if len(seen) != len(model) {
			t.Fatalf("%s: the walk returned %d keys, %d are live", what, len(seen), len(model))
		}
		if n, ok := kv.UserKeys(); !ok || n != int64(len(model)) {
			t.Fatalf("%s: UserKeys = %d, %v; %d live", what, n, ok, len(model))
		}
	}
	const keys = 400
	for op := 0; op < 2500; op++ {
		k := fmt.Sprintf("user:%d", rng.IntN(keys))
		switch r := rng.IntN(10); {
		case r < 7:
			var v []byte
			switch rng.IntN(6) {
			case 0:
				v = bytes.Repeat([]byte{byte(op)}, 3500) // the device value takes an extent
			case 1:
				v = bytes.Repeat([]byte{byte(op)}, 5000+rng.IntN(9000)) // 2..4 chunks
			default:
				v = bytes.Repeat([]byte{byte(op)}, 1+rng.IntN(600))
			}
			if err := kv.Put(ctx, []byte(k), v, nvmekv.Meta{Version: uint64(op)}); err != nil {
				t.Fatalf("op %d: put %s: %v", op, k, err)
			}
			model[k] = v
		default:
			err := kv.Delete(ctx, []byte(k))
			if _, live := model[k]; live != (err == nil) {
				t.Fatalf("op %d: delete %s: %v, live %v", op, k, err, live)
			}
			delete(model, k)
		}
		if n, ok := kv.UserKeys(); !ok || n != int64(len(model)) {
			t.Fatalf("op %d: UserKeys = %d, %v; %d live", op, n, ok, len(model))
		}
		if op%250 == 0 {
			check(fmt.Sprintf("op %d", op))
		}
	}
	check("end")
	if st := ns.Stats(); st.Reclaimed != 0 {
		t.Fatalf("the store reclaimed %d regions: the model does not follow reclaim", st.Reclaimed)
	}
	for _, how := range []string{"checkpoint", "scan"} {
		kv.Close()
		oo := o
		if how == "scan" {
			oo.CheckpointPath = "-"
		}
		ns = mustOpen(t, oo)
		if got := ns.Stats().Recovered; got != how {
			t.Fatalf("reopened by %s, want %s", got, how)
		}
		if kv, err = nvmekv.NewKV(ns, nvmekv.KVOptions{}); err != nil {
			t.Fatal(err)
		}
		check("reopened by " + how)
	}
}

// TestScanUserKeysUnsupported (nvmekv K17): a KV whose hasher is not
// DefaultHasher cannot scan (errors.ErrUnsupported).
func TestScanUserKeysUnsupported(t *testing.T) {
	ns := mustOpen(t, testOptions(t))
	defer ns.Close()
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{Hash: func(k []byte) [16]byte { return nvmekv.DefaultHasher(append(k, 1)) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.ScanUserKeys(ctx, 0, 10, func([]byte, nvmekv.Meta) {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("ScanUserKeys with a test hasher: %v, want ErrUnsupported", err)
	}
}

// TestScanUserKeysDuringMoves (logstore E33): walks of ScanUserKeys run
// while writers overwrite keys in a small store, so that records move
// under the walks (overwrites) and regions are reclaimed (Cache) or
// copied forward (Strict): a walk never returns a key twice nor a key
// never written, and returns every key that stayed live throughout it:
// live when it started (no write in flight) and not dropped by reclaim
// (OnReclaim) before the writes in flight when it ended completed.
func TestScanUserKeysDuringMoves(t *testing.T) {
	for _, mode := range []Mode{Cache, Strict} {
		t.Run(mode.String(), func(t *testing.T) {
			defer logstore.SetTagMask(logstore.SetTagMask(0xfff00000)) // a few keys a tag
			scanDuringMoves(t, mode)
		})
	}
}

func scanDuringMoves(t *testing.T, mode Mode) {
	// Stable keys are written once (Strict mode copies them forward, Cache
	// mode drops them in time); hot keys are overwritten all the time.
	const stable, hot = 200, 200
	var names []string
	byDev := map[[16]byte]string{}
	for i := 0; i < stable+hot; i++ {
		k := fmt.Sprintf("stable:%d", i)
		if i >= stable {
			k = fmt.Sprintf("hot:%d", i-stable)
		}
		names = append(names, k)
		byDev[nvmekv.DefaultHasher([]byte(k))] = k
	}
	var mu sync.Mutex // guards live and dropped
	live := map[string]bool{}
	dropped := map[string]bool{} // since the current walk started
	o := testOptions(t)
	o.Mode = mode
	o.OnReclaim = func(dk [16]byte) {
		mu.Lock()
		defer mu.Unlock()
		if k, ok := byDev[dk]; ok {
			live[k], dropped[k] = false, true
		}
	}
	ns := mustOpen(t, o)
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	put := func(k string, v []byte) error {
		err := kv.Put(context.Background(), []byte(k), v, nvmekv.Meta{})
		if err == nil {
			mu.Lock()
			live[k] = true
			mu.Unlock()
		}
		return err
	}
	for _, k := range names {
		if err := put(k, bytes.Repeat([]byte{1}, 100)); err != nil {
			t.Fatal(err)
		}
	}
	st0 := ns.Stats()
	var gate sync.RWMutex // writers hold it read-locked per Put
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes atomic.Int64
	var werr atomic.Value
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := names[stable+rng.IntN(hot)]
				gate.RLock()
				err := put(k, bytes.Repeat([]byte{byte(i)}, 50+rng.IntN(400)))
				gate.RUnlock()
				if err != nil && !errors.Is(err, nvmekv.ErrCapacityExceeded) {
					werr.Store(err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	rng := rand.New(rand.NewPCG(9, 9))
	walks, checked := 0, 0
	for ; walks < 300; walks++ {
		gate.Lock() // no write in flight: live is exact
		mu.Lock()
		before := map[string]bool{}
		for k, l := range live {
			if l {
				before[k] = true
			}
		}
		clear(dropped)
		mu.Unlock()
		gate.Unlock()
		seen := walkUserKeys(t, kv, rng)
		gate.Lock() // the writes in flight completed, their drops reported
		mu.Lock()
		for k, c := range seen {
			if c != 1 || byDev[nvmekv.DefaultHasher([]byte(k))] != k {
				t.Errorf("walk %d returned %q %d times", walks, k, c)
			}
		}
		for k := range before {
			if !dropped[k] {
				checked++
				if seen[k] == 0 {
					t.Errorf("walk %d missed %q, live throughout it", walks, k)
				}
			}
		}
		mu.Unlock()
		gate.Unlock()
		if t.Failed() {
			break
		}
		st := ns.Stats()
		if walks >= 5 && st.Reclaimed-st0.Reclaimed >= 30 && (mode == Cache || st.Evacuated-st0.Evacuated >= 10) {
			break
		}
	}
	close(stop)
	wg.Wait()
	if err, _ := werr.Load().(error); err != nil {
		t.Fatal(err)
	}
	st := ns.Stats()
	t.Logf("%d walks, %d keys checked, %d writes, %d regions reclaimed, %d evacuated", walks, checked, writes.Load(), st.Reclaimed-st0.Reclaimed, st.Evacuated-st0.Evacuated)
	if st.Reclaimed == st0.Reclaimed || mode == Strict && st.Evacuated == st0.Evacuated {
		t.Fatal("no region was reclaimed or evacuated while the walks ran")
	}
}
