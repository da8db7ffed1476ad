package emu

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
)

// benchPath is TIERCACHE_BENCH_FILE (scripts/bench-nvmekv puts it next to
// fio's file) or a file in a temp dir.
func benchPath(b *testing.B, name string) string {
	if p := os.Getenv("TIERCACHE_BENCH_FILE"); p != "" {
		os.Remove(p)
		os.Remove(p + ".ckpt")
		return p
	}
	return b.TempDir() + "/" + name
}

const benchQD = 64

// benchItems is how many keys a benchmark stores: TIERCACHE_BENCH_ITEMS,
// else full, or a tenth of it with -short.
func benchItems(full int) int {
	if s := os.Getenv("TIERCACHE_BENCH_ITEMS"); s != "" {
		n, _ := strconv.Atoi(s)
		return n
	}
	if testing.Short() {
		return full / 10
	}
	return full
}

func benchNS(b *testing.B, path string) *Namespace {
	ns, err := Open(Options{Path: path, Capacity: 2 << 30, RegionBytes: 4 << 20, MaxValueBytes: 64 << 10, ExpectedItems: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	return ns
}

// BenchmarkStore4K: 4 KiB Stores from 64 concurrent goroutines (QD 64),
// Flush at the end (included in the time).
func BenchmarkStore4K(b *testing.B) {
	ns := benchNS(b, benchPath(b, "store"))
	defer ns.Close()
	b.SetBytes(4096)
	b.ReportAllocs()
	b.SetParallelism(benchQD / max(1, runtimeProcs()))
	var n atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		v := make([]byte, 4096)
		var k [16]byte
		for pb.Next() {
			binary.LittleEndian.PutUint64(k[:], n.Add(1)%(256<<10))
			if err := ns.Store(ctx, k[:], v, 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if err := ns.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStore4KSync: write-through 4 KiB Stores (Options.SyncWrites:
// each returns once durable; concurrent ones share fdatasyncs), QD 64.
func BenchmarkStore4KSync(b *testing.B) {
	path := benchPath(b, "storesync")
	ns, err := Open(Options{Path: path, Capacity: 2 << 30, RegionBytes: 4 << 20, MaxValueBytes: 64 << 10, ExpectedItems: 1 << 20, SyncWrites: true})
	if err != nil {
		b.Fatal(err)
	}
	defer ns.Close()
	b.SetBytes(4096)
	b.ReportAllocs()
	b.SetParallelism(benchQD / max(1, runtimeProcs()))
	var n atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		v := make([]byte, 4096)
		var k [16]byte
		for pb.Next() {
			binary.LittleEndian.PutUint64(k[:], n.Add(1)%(256<<10))
			if err := ns.Store(ctx, k[:], v, 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(ns.Stats().Syncs)/float64(b.N), "syncs/op")
}

// retrieveNS opens a namespace holding keys 4 KiB values, flushed and out
// of the DRAM write buffers (Retrieves read the file). With
// TIERCACHE_BENCH_KEEP=1, a TIERCACHE_BENCH_FILE that already holds them
// (from an earlier run) is opened as it is: the reads are then not measured
// right after writing 268 MiB (a virtual disk reads slower while its host
// writes back), so they meet the device in the same state as fio's
// randread that scripts/bench-nvmekv alternates them with.
func retrieveNS(b *testing.B, name string, keys int) *Namespace {
	if p := os.Getenv("TIERCACHE_BENCH_FILE"); p != "" && os.Getenv("TIERCACHE_BENCH_KEEP") == "1" {
		if _, err := os.Stat(p); err == nil {
			ns := benchNS(b, p)
			var first, last [16]byte
			binary.LittleEndian.PutUint64(last[:], uint64(keys-1))
			ok1, _ := ns.Exist(ctx, first[:])
			ok2, _ := ns.Exist(ctx, last[:])
			if ok1 && ok2 && ns.Stats().Items >= keys {
				return ns
			}
			ns.Close()
		}
	}
	ns := benchNS(b, benchPath(b, name))
	v := make([]byte, 4096)
	ops := make([]*nvmekv.Op, 0, 64)
	for i := 0; i < keys; i++ {
		k := make([]byte, 16)
		binary.LittleEndian.PutUint64(k, uint64(i))
		ops = append(ops, &nvmekv.Op{Code: nvmekv.OpStore, Key: k, Buf: v})
		if len(ops) == cap(ops) {
			ns.Do(ctx, ops...)
			ops = ops[:0]
		}
	}
	if err := ns.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	// Push the last regions out of the write buffers.
	for i := 0; i < 3*(4<<20)/4096; i++ {
		k := make([]byte, 16)
		binary.LittleEndian.PutUint64(k, uint64(keys+i))
		ns.Store(ctx, k, v, 0)
	}
	ns.Flush(ctx)
	return ns
}

// BenchmarkRetrieve4K: random 4 KiB Retrieves of 256 MiB of flushed data
// (read from the file, not from DRAM) at QD 64: 64 goroutines, one
// Retrieve each at a time.
func BenchmarkRetrieve4K(b *testing.B) {
	const keys = 64 << 10
	ns := retrieveNS(b, "retrieve", keys)
	defer ns.Close()
	b.SetBytes(4096)
	b.ReportAllocs()
	b.SetParallelism(benchQD / max(1, runtimeProcs()))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 4096)
		var k [16]byte
		rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for pb.Next() {
			binary.LittleEndian.PutUint64(k[:], uint64(rng.IntN(keys)))
			if _, err := ns.Retrieve(ctx, k[:], buf); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	st := ns.Stats()
	b.ReportMetric(float64(st.DiskReads)/float64(b.N), "diskreads/op")
	b.ReportMetric(float64(st.ReadBytes)/float64(max(1, st.DiskReads)), "B/diskread")
	b.ReportMetric(float64(st.DirectReads)/float64(max(1, st.DiskReads)), "direct/diskread")
	fs := ns.FrontStats()
	b.ReportMetric(float64(fs.Enters)/float64(b.N), "enters/op")
	b.ReportMetric(float64(fs.Wakeups)/float64(b.N), "wakeups/op")
}

// BenchmarkRetrieve4KQD1: the same reads from one goroutine, one at a time:
// ns/op is the latency of a Retrieve that nothing else shares a wake-up
// with (a cold GET on a quiet connection); its peer is fio at iodepth 1.
func BenchmarkRetrieve4KQD1(b *testing.B) {
	const keys = 64 << 10
	ns := retrieveNS(b, "retrieve", keys)
	defer ns.Close()
	b.SetBytes(4096)
	b.ReportAllocs()
	buf := make([]byte, 4096)
	var k [16]byte
	rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
	b.ResetTimer()
	for range b.N {
		binary.LittleEndian.PutUint64(k[:], uint64(rng.IntN(keys)))
		if _, err := ns.Retrieve(ctx, k[:], buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	fs := ns.FrontStats()
	b.ReportMetric(float64(fs.Enters)/float64(b.N), "enters/op")
	b.ReportMetric(float64(fs.Wakeups)/float64(b.N), "wakeups/op")
}

// BenchmarkRetrieve4KBatch8: the same reads at QD 64 as 8 goroutines each
// doing one Do of 8 Retrieves at a time (the GetMany path).
func BenchmarkRetrieve4KBatch8(b *testing.B) { retrieveBatches(b, 8) }

// BenchmarkRetrieve4KBatch64: the same reads at QD 64 from one goroutine
// doing one Do of 64 Retrieves at a time (a GetMany of 64 cold keys): its
// waves run on the batch ring (E16), fio's own model.
func BenchmarkRetrieve4KBatch64(b *testing.B) { retrieveBatches(b, 64) }

// retrieveBatches reads at QD 64 from benchQD/batch goroutines, each doing
// one Do of batch Retrieves at a time.
func retrieveBatches(b *testing.B, batch int) {
	const keys = 64 << 10
	ns := retrieveNS(b, "retrievebatch", keys)
	defer ns.Close()
	b.SetBytes(4096)
	b.ReportAllocs()
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	for range benchQD / batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(rand.Uint64(), 3))
			ops := make([]*nvmekv.Op, batch)
			for i := range ops {
				ops[i] = &nvmekv.Op{Code: nvmekv.OpRetrieve, Key: make([]byte, 16), Buf: make([]byte, 4096)}
			}
			for {
				n := min(int64(batch), left.Add(-int64(batch))+int64(batch))
				if n <= 0 {
					return
				}
				for _, op := range ops[:n] {
					binary.LittleEndian.PutUint64(op.Key, uint64(rng.IntN(keys)))
				}
				if err := ns.Do(ctx, ops[:n]...); err != nil {
					b.Error(err)
					return
				}
				for _, op := range ops[:n] {
					if op.Err != nil {
						b.Error(op.Err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	st := ns.Stats()
	b.ReportMetric(float64(st.BatchReads)/float64(max(1, st.DiskReads)), "batch/diskread")
}

// BenchmarkOpen builds a store of TIERCACHE_BENCH_ITEMS small records
// (default 10M; 1M under -short) once, then measures Open from the
// checkpoint and by scanning, and the index's DRAM per item. scan settles
// the changes by tag (E37); its peers replay into a keyed table:
// scan-keyed in sorted batches of 2M (E36, the scan before E37), and
// scan-inorder each change as its record is read (ReplayBatch 1).
//
// With TIERCACHE_BENCH_REUSE=1 and TIERCACHE_BENCH_FILE, the store another
// run of it left in that file (of the same TIERCACHE_BENCH_ITEMS) is
// opened as it is, not built again: two builds compared on one store.
func BenchmarkOpen(b *testing.B) {
	items := benchItems(10_000_000)
	if p := os.Getenv("TIERCACHE_BENCH_FILE"); p != "" && os.Getenv("TIERCACHE_BENCH_REUSE") == "1" {
		if _, err := os.Stat(p); err == nil {
			benchOpen(b, items, Options{Path: p, Capacity: int64(items)*64*5/4 + 64<<20, RegionBytes: 4 << 20, MaxValueBytes: 4096})
			return
		}
	}
	path := benchPath(b, "open")
	o := Options{Path: path, Capacity: int64(items)*64*5/4 + 64<<20, RegionBytes: 4 << 20, MaxValueBytes: 4096}
	ns, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	lo := 0
	for _, at := range []int{1_000_000, 2_000_000, 3_000_000, 5_000_000} {
		if at >= items {
			break
		}
		fillRange(b, ns, lo, at)
		lo = at
		st := ns.Stats()
		b.Logf("at %d items: index %.2f B/item", st.Items, float64(st.IndexBytes)/float64(st.Items))
	}
	fillRange(b, ns, lo, items)
	st := ns.Stats()
	b.Logf("wrote %d records of 64 B in %v; index %d B = %.1f B/item", st.Items, time.Since(start), st.IndexBytes,
		float64(st.IndexBytes)/float64(st.Items))
	if err := ns.Close(); err != nil {
		b.Fatal(err)
	}
	benchOpen(b, items, o)
}

// benchOpen opens the store of items records at o's path in every way
// BenchmarkOpen compares.
func benchOpen(b *testing.B, items int, o Options) {
	for _, mode := range []string{"checkpoint", "scan", "scan-keyed", "scan-inorder"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				oo := o
				if mode != "checkpoint" {
					oo.CheckpointPath = "-"
				}
				switch mode {
				case "scan-keyed":
					oo.ReplayBatch = logstore.ReplayBatch
				case "scan-inorder":
					oo.ReplayBatch = 1
				}
				t0 := time.Now()
				ns, err := Open(oo)
				if err != nil {
					b.Fatal(err)
				}
				d := time.Since(t0)
				st := ns.Stats()
				if mode == "checkpoint" && st.Recovered == "scan" && os.Getenv("TIERCACHE_BENCH_REUSE") == "1" {
					// A reused store's checkpoint is stale after another
					// run's scan closed it: this close writes it again.
					b.Logf("a stale checkpoint: scanned in %v, rewritten", d)
					ns.Close()
					t0 = time.Now()
					if ns, err = Open(oo); err != nil {
						b.Fatal(err)
					}
					d, st = time.Since(t0), ns.Stats()
				}
				if st.Recovered != strings.Split(mode, "-")[0] || st.Items != items {
					b.Fatalf("recovered %d items by %s, want %d by %s", st.Items, st.Recovered, items, mode)
				}
				b.ReportMetric(d.Seconds(), "open-s")
				b.ReportMetric(float64(st.IndexBytes)/float64(st.Items), "indexB/item")
				if mode == "checkpoint" {
					ns.Close() // rewrites the checkpoint for the next round
				} else {
					ns.Close()
				}
			}
		})
	}
}

func fillSmall(tb testing.TB, ns *Namespace, items int) { fillRange(tb, ns, 0, items) }

// fillRange stores the small records fillSmall does, from lo up to hi.
func fillRange(tb testing.TB, ns *Namespace, lo, hi int) {
	v := make([]byte, 8)
	ops := make([]*nvmekv.Op, 256)
	keys := make([][16]byte, 256)
	for i := range ops {
		ops[i] = &nvmekv.Op{Code: nvmekv.OpStore, Buf: v}
	}
	for i := lo; i < hi; i += len(ops) {
		n := min(len(ops), hi-i)
		for j := 0; j < n; j++ {
			binary.LittleEndian.PutUint64(keys[j][:], uint64(i+j)*0x9e3779b97f4a7c15)
			binary.LittleEndian.PutUint64(keys[j][8:], uint64(i+j))
			ops[j].Key = keys[j][:]
		}
		if err := ns.Do(ctx, ops[:n]...); err != nil {
			tb.Fatal(err)
		}
		for _, op := range ops[:n] {
			if op.Err != nil {
				tb.Fatal(fmt.Errorf("store: %w", op.Err))
			}
		}
	}
}

// TestRecoveryTime reports how long Open takes to rebuild the index of 1M
// small records (100k under -short) by scanning and from the checkpoint.
func TestRecoveryTime(t *testing.T) {
	items := 1_000_000
	if testing.Short() {
		items = 100_000
	}
	o := Options{Path: t.TempDir() + "/rec", Capacity: int64(items)*64*5/4 + 64<<20, RegionBytes: 4 << 20, MaxValueBytes: 4096}
	ns := mustOpen(t, o)
	fillSmall(t, ns, items)
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"checkpoint", "scan"} {
		oo := o
		if mode == "scan" {
			oo.CheckpointPath = "-"
		}
		t0 := time.Now()
		ns := mustOpen(t, oo)
		d := time.Since(t0)
		st := ns.Stats()
		if st.Items != items || st.Recovered != mode {
			t.Fatalf("%s: recovered %d items by %s, want %d", mode, st.Items, st.Recovered, items)
		}
		t.Logf("recovery of %d records of 64 B by %s: %v (index %.1f B/item)", items, mode, d, float64(st.IndexBytes)/float64(st.Items))
		ns.Close()
	}
}

// BenchmarkKVGet1K: KV.Get of 1 KiB values (header + inline value, CRC
// checked) from flushed data, 64 goroutines.
func BenchmarkKVGet1K(b *testing.B) {
	ns := benchNS(b, benchPath(b, "kvget"))
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer kv.Close()
	const keys = 50000
	v := make([]byte, 1024)
	for i := 0; i < keys; i++ {
		if err := kv.Put(ctx, []byte(fmt.Sprintf("user:%08d", i)), v, nvmekv.Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	kv.Sync(ctx)
	b.SetBytes(1024)
	b.ReportAllocs()
	b.SetParallelism(benchQD / max(1, runtimeProcs()))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
		dst := make([]byte, 0, 1024)
		for pb.Next() {
			got, _, err := kv.Get(ctx, dst[:0], []byte(fmt.Sprintf("user:%08d", rng.IntN(keys))))
			if err != nil || len(got) != 1024 {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkClear: KV.Clear of a store of small records (fillSmall, 64 B
// each), through the namespace's own Clear (E34: O(1) in the keys) at 1M
// and 100k keys, and through List+Delete (K10's path for a KV SSD; the
// namespace wrapped in listOnly) at 100k keys only, on the same store:
// List reads every region holding a live inline record and each Delete
// checks its record's header, so the time grows with the square of the
// keys: List+Delete of 1M keys (TIERCACHE_BENCH_CLEAR_LIST_1M=1 adds it)
// took 277 s here. Each round refills the store with the timer stopped,
// so run it with a fixed count (-benchtime=3x); it reports the keys
// cleared per round.
func BenchmarkClear(b *testing.B) {
	const most = 1_000_000
	o := Options{Path: benchPath(b, "clear"), Capacity: int64(most)*64*5/4 + 64<<20, RegionBytes: 4 << 20, MaxValueBytes: 4096}
	ns, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer ns.Close()
	type clearCase struct {
		name  string
		items int
		list  bool
	}
	cases := []clearCase{{"emu/1M", most, false}, {"emu/100k", 100_000, false}, {"listdelete/100k", 100_000, true}}
	if os.Getenv("TIERCACHE_BENCH_CLEAR_LIST_1M") == "1" {
		cases = append(cases, clearCase{"listdelete/1M", most, true})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var n nvmekv.Namespace = ns
			if c.list {
				n = listOnly{ns}
			}
			kv, err := nvmekv.NewKV(n, nvmekv.KVOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				fillSmall(b, ns, c.items)
				if got := ns.Stats().Items; got != c.items {
					b.Fatalf("%d items after the fill, want %d", got, c.items)
				}
				b.StartTimer()
				if _, err := kv.Clear(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if got := ns.Stats().Items; got != 0 {
					b.Fatalf("%d items after Clear", got)
				}
			}
			b.ReportMetric(float64(c.items), "keys")
		})
	}
}
