package emu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
)

// weakHash maps user keys onto 8 device keys, forcing collisions.
func weakHash(key []byte) [16]byte {
	h := fnv.New32a()
	h.Write(key)
	return [16]byte{15: byte(h.Sum32() % 8), 0: 0xaa}
}

// TestKVModel drives random Put/Get/Delete/Exists/GetMany/PutMany through
// KV → encoded commands → the emulated controller, against a map model,
// with values crossing chunk boundaries, forced device-key collisions, and
// reopens (checkpoint and scan) along the way.
func TestKVModel(t *testing.T) {
	for _, hash := range []struct {
		name    string
		h       nvmekv.Hasher
		keys    int
		hdrRead int // first Retrieve size: small forces the short-buffer retry
	}{{"xxh3", nil, 40, 0}, {"weak", weakHash, 40, 0}, {"shortbuf", nil, 40, 100}} {
		t.Run(hash.name, func(t *testing.T) {
			o := testOptions(t)
			o.Capacity = 1024 * (64 << 10)
			ns := mustOpen(t, o)
			kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{Hash: hash.h, MaxKeyBytes: 64, HeaderReadBytes: hash.hdrRead})
			if err != nil {
				t.Fatal(err)
			}
			hf := hash.h
			if hf == nil {
				hf = nvmekv.DefaultHasher
			}
			model := map[string][]byte{}
			owner := map[[16]byte]string{}
			rng := rand.New(rand.NewPCG(1, uint64(len(hash.name))))
			chunk := 4096 - nvmekv.ChunkHdrBytes
			sizes := []int{0, 1, 100, 4096 - nvmekv.HeaderBytes - 8, 4096 - nvmekv.HeaderBytes - 7, chunk - 1, chunk, chunk + 1, 2 * chunk, 3*chunk + 17}
			put := func(k string, v []byte) {
				d := hf([]byte(k))
				if o, ok := owner[d]; ok && o != k {
					delete(model, o)
				}
				owner[d] = k
				model[k] = v
			}
			del := func(k string) bool {
				d := hf([]byte(k))
				if owner[d] != k {
					return false
				}
				delete(owner, d)
				delete(model, k)
				return true
			}
			var collisions uint64
			ops := 1500
			if testing.Short() {
				ops = 600
			}
			for i := 0; i < ops; i++ {
				k := fmt.Sprintf("user-key-%d", rng.IntN(hash.keys))
				switch r := rng.IntN(100); {
				case r < 40:
					v := make([]byte, sizes[rng.IntN(len(sizes))])
					for j := range v {
						v[j] = byte(rng.Uint32())
					}
					if err := kv.Put(ctx, []byte(k), v, nvmekv.Meta{Version: uint64(i)}); err != nil {
						t.Fatalf("op %d put %s: %v", i, k, err)
					}
					put(k, v)
				case r < 50:
					items := []nvmekv.Item{{Key: []byte(k), Value: []byte("many-" + k)}, {Key: []byte(k + "x"), Value: make([]byte, 2*chunk+5)}}
					if err := kv.PutMany(ctx, items); err != nil {
						t.Fatalf("op %d putmany: %v", i, err)
					}
					put(k, items[0].Value)
					put(k+"x", items[1].Value)
				case r < 75:
					// A size hint never changes the answer: none, right,
					// too small, too large, beyond one record.
					want, ok := model[k]
					hint := []int{-1, len(want), len(want) / 2, len(want) + 100, 1 << 20}[rng.IntN(5)]
					got, _, err := kv.GetSized(ctx, nil, []byte(k), hint)
					if ok != (err == nil) || !bytes.Equal(got, want) {
						t.Fatalf("op %d get %s: got %d bytes err=%v, model has %v (%d bytes)", i, k, len(got), err, ok, len(want))
					}
					if err != nil && !errors.Is(err, nvmekv.ErrKeyNotFound) {
						t.Fatalf("op %d get %s: %v", i, k, err)
					}
				case r < 81:
					err := kv.Delete(ctx, []byte(k))
					if ok := del(k); ok != (err == nil) {
						t.Fatalf("op %d delete %s: err=%v, model had it: %v", i, k, err, ok)
					}
				case r < 85:
					// The same key twice: deleted once, then not found.
					keys := [][]byte{[]byte(k), []byte(k + "x"), []byte("nope-" + k), []byte(k)}
					for j, err := range kv.DeleteMany(ctx, keys) {
						if ok := del(string(keys[j])); ok != (err == nil) || err != nil && !errors.Is(err, nvmekv.ErrKeyNotFound) {
							t.Fatalf("op %d deletemany %s: err=%v, model had it: %v", i, keys[j], err, ok)
						}
					}
				case r < 92:
					ok, err := kv.Exists(ctx, []byte(k))
					if _, want := model[k]; err != nil || ok != want {
						t.Fatalf("op %d exists %s = %v, %v; model %v", i, k, ok, err, want)
					}
				case r < 97:
					keys := [][]byte{[]byte(k), []byte(k + "x"), []byte("nope")}
					items := kv.GetMany(ctx, keys)
					if rng.IntN(2) == 0 {
						items = kv.GetManySized(ctx, keys, []int{len(model[k]), rng.IntN(3 * chunk), 10})
					}
					for j, it := range items {
						want, ok := model[string(keys[j])]
						if ok != (it.Err == nil) || !bytes.Equal(it.Value, want) {
							t.Fatalf("op %d getmany %s: %d bytes err=%v; model %v", i, keys[j], len(it.Value), it.Err, ok)
						}
					}
				default:
					collisions += kv.Stats().Collisions // a KV's counters start at zero
					if err := kv.Close(); err != nil {
						t.Fatal(err)
					}
					o2 := o
					if rng.IntN(2) == 0 {
						o2.CheckpointPath = "-" // scan
					}
					ns = mustOpen(t, o2)
					kv, _ = nvmekv.NewKV(ns, nvmekv.KVOptions{Hash: hash.h, MaxKeyBytes: 64, HeaderReadBytes: hash.hdrRead})
				}
			}
			st := kv.Stats()
			t.Logf("stats since the last reopen %+v, ns %+v", st, ns.Stats())
			if hash.h != nil && collisions+st.Collisions == 0 {
				t.Error("weak hash produced no collisions")
			}
			kv.Close()
		})
	}
}

// countingNS counts the Retrieves and the submissions (Do calls) sent to a
// Namespace.
type countingNS struct {
	*Namespace
	retrieves, dos int
}

func (c *countingNS) Do(ctx context.Context, ops ...*nvmekv.Op) error {
	c.dos++
	for _, op := range ops {
		if op.Code == nvmekv.OpRetrieve {
			c.retrieves++
		}
	}
	return c.Namespace.Do(ctx, ops...)
}

// TestGetSizedOneRoundTrip: a value whose record is larger than the first
// Retrieve's buffer takes two Retrieves (the second at the size the device
// reported); told its size, a Get takes one, and a wrong size only costs
// the second again.
func TestGetSizedOneRoundTrip(t *testing.T) {
	o := testOptions(t)
	o.MaxValueBytes = 32 << 10 // a 4 KiB value is one record, not chunks
	ns := &countingNS{Namespace: mustOpen(t, o)}
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{HeaderReadBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	val := bytes.Repeat([]byte("e"), 4096) // a 1024-dimension float32 embedding
	if err := kv.Put(ctx, []byte("emb"), val, nvmekv.Meta{}); err != nil {
		t.Fatal(err)
	}
	small := []byte("tiny")
	if err := kv.Put(ctx, []byte("small"), small, nvmekv.Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key       string
		hint      int
		want      []byte
		retrieves int
	}{
		{"emb", -1, val, 2},
		{"emb", len(val), val, 1},
		{"emb", len(val) - 100, val, 2},
		{"emb", len(val) + 5000, val, 1},
		{"small", -1, small, 1},
		{"small", len(small), small, 1},
		{"small", 8000, small, 1},
	} {
		ns.retrieves = 0
		got, _, err := kv.GetSized(ctx, nil, []byte(tc.key), tc.hint)
		if err != nil || !bytes.Equal(got, tc.want) || ns.retrieves != tc.retrieves {
			t.Errorf("GetSized(%s, %d) = %d bytes, %v, in %d Retrieves; want %d bytes in %d",
				tc.key, tc.hint, len(got), err, ns.retrieves, len(tc.want), tc.retrieves)
		}
	}
	ns.retrieves = 0
	items := kv.GetManySized(ctx, [][]byte{[]byte("emb"), []byte("small")}, []int{len(val), len(small)})
	if items[0].Err != nil || !bytes.Equal(items[0].Value, val) || items[1].Err != nil || !bytes.Equal(items[1].Value, small) || ns.retrieves != 2 {
		t.Errorf("GetManySized: %v %v in %d Retrieves; want both values in 2", items[0].Err, items[1].Err, ns.retrieves)
	}
}

// TestKVExpiry: a record past its expiry reads as a miss (Get, GetMany,
// Exists), also when chunked, unless the KV keeps expired records
// (KeepExpired), which returns it with its expiry in Meta.
func TestKVExpiry(t *testing.T) {
	o := testOptions(t)
	o.MaxValueBytes = 8 << 10 // a 20 KiB value is chunked
	ns := mustOpen(t, o)
	now := int64(1_700_000_000_000_000_000)
	clock := func() int64 { return now }
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	keep, err := nvmekv.NewKV(ns, nvmekv.KVOptions{Clock: clock, KeepExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	exp := now + int64(time.Hour)
	vals := map[string][]byte{"small": []byte("v"), "big": bytes.Repeat([]byte("b"), 20<<10)}
	for k, v := range vals {
		if err := kv.Put(ctx, []byte(k), v, nvmekv.Meta{Expiry: exp, Version: 7}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, live bool) {
		t.Helper()
		for k, v := range vals {
			got, m, err := kv.Get(ctx, nil, []byte(k))
			if live && (err != nil || !bytes.Equal(got, v)) || !live && !errors.Is(err, nvmekv.ErrKeyNotFound) {
				t.Errorf("%s: Get(%s): %d bytes, %v", when, k, len(got), err)
			}
			if ok, err := kv.Exists(ctx, []byte(k)); ok != live || err != nil {
				t.Errorf("%s: Exists(%s) = %v, %v", when, k, ok, err)
			}
			items := kv.GetMany(ctx, [][]byte{[]byte(k)})
			if live != (items[0].Err == nil) {
				t.Errorf("%s: GetMany(%s): %v", when, k, items[0].Err)
			}
			got, m, err = keep.Get(ctx, nil, []byte(k))
			if err != nil || !bytes.Equal(got, v) || m.Expiry != exp || m.Version != 7 {
				t.Errorf("%s: KeepExpired Get(%s): %d bytes, %+v, %v", when, k, len(got), m, err)
			}
		}
	}
	check("before the expiry", true)
	now = exp
	check("at the expiry", false)
}

// TestKVFailedChainHidesHeader: a Put whose chain fails part-way (strict
// mode runs out of space on a chunk) never publishes its header, and a Get
// then returns the old value or a miss, never a mix.
func TestKVFailedChainHidesHeader(t *testing.T) {
	o := testOptions(t)
	o.Mode = Strict
	ns := mustOpen(t, o)
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	old := bytes.Repeat([]byte("o"), 9000)
	if err := kv.Put(ctx, []byte("victim"), old, nvmekv.Meta{}); err != nil {
		t.Fatal(err)
	}
	// Fill the namespace to the brim with small values.
	var err2 error
	for i := 0; err2 == nil; i++ {
		err2 = kv.Put(ctx, []byte(fmt.Sprintf("fill-%d", i)), make([]byte, 3000), nvmekv.Meta{})
	}
	if !errors.Is(err2, nvmekv.ErrCapacityExceeded) {
		t.Fatalf("filling: %v", err2)
	}
	big := bytes.Repeat([]byte("n"), 20000)
	if err := kv.Put(ctx, []byte("victim"), big, nvmekv.Meta{}); !errors.Is(err, nvmekv.ErrCapacityExceeded) {
		t.Fatalf("put into a full strict namespace: %v", err)
	}
	if err := kv.Put(ctx, []byte("newkey"), big, nvmekv.Meta{}); err == nil {
		t.Fatal("put of a new big key into a full namespace succeeded")
	}
	if _, _, err := kv.Get(ctx, nil, []byte("newkey")); !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("failed put published its header: %v", err)
	}
	got, _, err := kv.Get(ctx, nil, []byte("victim"))
	if err == nil && !bytes.Equal(got, old) {
		t.Fatalf("victim reads %d bytes that are neither the old value nor a miss", len(got))
	}
	if err != nil && !errors.Is(err, nvmekv.ErrKeyNotFound) {
		t.Fatalf("victim: %v", err)
	}
}

// TestStrictCompaction: Strict mode moves the oldest region's live records
// forward, so overwrites never fill the log; it reports Capacity Exceeded
// only when live data nears the capacity, and everything survives reopening.
func TestStrictCompaction(t *testing.T) {
	o := testOptions(t) // 16 regions of 64 KiB
	o.Mode = Strict
	ns := mustOpen(t, o)
	model := map[string][]byte{}
	for i := 0; i < 300; i++ { // 300 KB that stays live: its regions must be evacuated
		k, v := fmt.Sprintf("base-%d", i), bytes.Repeat([]byte{byte(i)}, 1000)
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatal(err)
		}
		model[k] = v
	}
	for i := 0; i < 5000; i++ { // ~5 MB of overwrites into 1 MiB
		k := fmt.Sprintf("hot-%d", i%100)
		v := bytes.Repeat([]byte{byte(i)}, 500+i%700)
		if err := ns.Store(ctx, []byte(k), v, 0); err != nil {
			t.Fatalf("overwrite %d (live %d B): %v", i, ns.Stats().LiveBytes, err)
		}
		model[k] = v
		if i%97 == 0 {
			if err := ns.Delete(ctx, []byte(k)); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
		}
	}
	if ns.Stats().Evacuated == 0 {
		t.Fatal("no region was evacuated")
	}
	var err error
	for i := 0; err == nil; i++ {
		k := fmt.Sprintf("cold-%d", i)
		v := bytes.Repeat([]byte{byte(i)}, 1000)
		if err = ns.Store(ctx, []byte(k), v, 0); err == nil {
			model[k] = v
		}
	}
	st := ns.Stats()
	if !errors.Is(err, nvmekv.ErrCapacityExceeded) || st.LiveBytes < int64(o.Capacity)/2 {
		t.Fatalf("filled to %d live bytes of %d: %v", st.LiveBytes, o.Capacity, err)
	}
	if err := ns.Delete(ctx, []byte("cold-0")); err != nil {
		t.Fatalf("delete when full: %v", err)
	}
	delete(model, "cold-0")
	check := func(ns *Namespace, what string) {
		t.Helper()
		buf := make([]byte, 4096)
		for k, v := range model {
			n, err := ns.Retrieve(ctx, []byte(k), buf)
			if err != nil || !bytes.Equal(buf[:n], v) {
				t.Fatalf("%s: %s: n=%d err=%v", what, k, n, err)
			}
		}
		if ns.Stats().Items != len(model) {
			t.Fatalf("%s: %d items, model %d", what, ns.Stats().Items, len(model))
		}
	}
	checkReopened(t, o, ns, check)
}

// TestKVClear: K10, E34. KV.Clear removes every key, chunks included,
// and the namespace stays empty after a clean reopen; a key Put after it
// is kept. Through the emulated namespace (a Clearer) it clears it whole
// and returns ClearedAll; through a namespace that is not (listOnly, as a
// KV SSD) it Lists and Deletes every device key and returns their count.
func TestKVClear(t *testing.T) {
	for _, path := range []string{"clearer", "list"} {
		t.Run(path, func(t *testing.T) { kvClear(t, path) })
	}
}

// listOnly hides the emulated namespace's Clear: KV.Clear Lists and
// Deletes, as on a KV SSD.
type listOnly struct{ nvmekv.Namespace }

func kvClear(t *testing.T, path string) {
	o := testOptions(t)
	newKV := func() (*nvmekv.KV, *Namespace) {
		ns := mustOpen(t, o)
		var n nvmekv.Namespace = ns
		if path == "list" {
			n = listOnly{ns}
		}
		kv, err := nvmekv.NewKV(n, nvmekv.KVOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return kv, ns
	}
	kv, ns := newKV()
	const n = 50
	for i := range n {
		v := bytes.Repeat([]byte{byte(i)}, 100+i*200) // up to ~10 KB: several chunks of 4 KiB records
		if err := kv.Put(ctx, []byte(fmt.Sprint("c", i)), v, nvmekv.Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	records := ns.Stats().Items
	want := records
	if path == "clearer" {
		want = nvmekv.ClearedAll
	}
	deleted, err := kv.Clear(ctx)
	if err != nil || deleted != want || records <= n {
		t.Fatalf("Clear = %d, %v, want %d; the namespace held %d records for %d keys (chunks included)", deleted, err, want, records, n)
	}
	empty := func(ns *Namespace, kv *nvmekv.KV, when string) {
		t.Helper()
		if keys, total, err := ns.List(ctx, nil, 4096); err != nil || len(keys) != 0 || total != 0 {
			t.Fatalf("%s: List = %d keys (total %d), %v", when, len(keys), total, err)
		}
		if items := ns.Stats().Items; items != 0 {
			t.Fatalf("%s: Items = %d", when, items)
		}
		for i := range n {
			if _, _, err := kv.Get(ctx, nil, []byte(fmt.Sprint("c", i))); !errors.Is(err, nvmekv.ErrKeyNotFound) {
				t.Fatalf("%s: Get c%d: %v", when, i, err)
			}
		}
	}
	empty(ns, kv, "after Clear")
	if err := kv.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	kv, ns = newKV()
	defer kv.Close()
	empty(ns, kv, "after a reopen")
	if err := kv.Put(ctx, []byte("new"), []byte("v"), nvmekv.Meta{}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := kv.Get(ctx, nil, []byte("new")); err != nil || string(got) != "v" {
		t.Fatalf("Get after Clear and Put = %q, %v", got, err)
	}
	if path == "clearer" {
		want = nvmekv.ClearedAll
	} else {
		want = 1
	}
	if n, err := kv.Clear(ctx); err != nil || n != want {
		t.Fatalf("second Clear = %d, %v; want %d", n, err, want)
	}
}

// TestDeleteManyTwoSubmissions: DeleteMany of 24 keys (inline and chunked
// values, absent keys) reads every header in one submission and sends
// every delete chain in one more; the deleted keys are gone, the others
// stay, and each key's outcome is reported.
func TestDeleteManyTwoSubmissions(t *testing.T) {
	o := testOptions(t)
	ns := &countingNS{Namespace: mustOpen(t, o)}
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	chunk := 4096 - nvmekv.ChunkHdrBytes
	var keys [][]byte
	for i := 0; i < 30; i++ {
		k := []byte(fmt.Sprintf("k%02d", i))
		v := bytes.Repeat([]byte{byte(i)}, []int{10, 3000, 2*chunk + 7}[i%3])
		if err := kv.Put(ctx, k, v, nvmekv.Meta{}); err != nil {
			t.Fatal(err)
		}
		if i < 20 {
			keys = append(keys, k)
		}
	}
	keys = append(keys, []byte("absent-1"), []byte("absent-2"), []byte("k05"), []byte(""))
	ns.dos = 0
	errs := kv.DeleteMany(ctx, keys)
	if ns.dos != 2 {
		t.Errorf("DeleteMany took %d submissions, want 2 (headers, then deletes)", ns.dos)
	}
	for i, err := range errs {
		switch {
		case i < 20 && err != nil:
			t.Errorf("%s: %v, want deleted", keys[i], err)
		case i >= 20 && i < 23 && !errors.Is(err, nvmekv.ErrKeyNotFound):
			t.Errorf("%q: %v, want ErrKeyNotFound", keys[i], err)
		case i == 23 && (err == nil || errors.Is(err, nvmekv.ErrKeyNotFound)):
			t.Errorf("empty key: %v, want the key check's error", err)
		}
	}
	for i := 0; i < 30; i++ {
		k := []byte(fmt.Sprintf("k%02d", i))
		_, _, err := kv.Get(ctx, nil, k)
		if gone := errors.Is(err, nvmekv.ErrKeyNotFound); gone != (i < 20) || !gone && err != nil {
			t.Errorf("%s after DeleteMany: %v", k, err)
		}
	}
}
