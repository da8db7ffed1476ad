package emu

import (
	"fmt"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/emu/logstore"
)

// BenchmarkScanUserKeys: a full walk of ScanUserKeys (n = 1024 and 65,536 a call)
// over a store of 1M user keys with 64-byte values (TIERCACHE_BENCH_ITEMS;
// 100,000 with -short), in keys/s; beside it, its peer on the same store:
// one List of every device key (a buffer for all of them: List reads
// every region holding a live inline record whatever its buffer, so
// paging would read the store once a page), which gives device keys
// only, not the user keys a walk returns.
func BenchmarkScanUserKeys(b *testing.B) {
	items := benchItems(1_000_000)
	ns, err := Open(Options{Path: benchPath(b, "scan"), Capacity: int64(items)*256 + 64<<20, RegionBytes: 4 << 20, MaxValueBytes: 64 << 10, ExpectedItems: items})
	if err != nil {
		b.Fatal(err)
	}
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer kv.Close()
	v := make([]byte, 64)
	batch := make([]nvmekv.Item, 0, 256)
	for i := 0; i < items; i++ {
		batch = append(batch, nvmekv.Item{Key: []byte(fmt.Sprintf("user:%09d", i)), Value: v})
		if len(batch) == cap(batch) || i == items-1 {
			if err := kv.PutMany(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := kv.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1024, 65536} {
		b.Run(fmt.Sprintf("scan-n%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				t0, got := time.Now(), 0
				for from := uint64(0); from < logstore.TagSpace; {
					if from, err = kv.ScanUserKeys(ctx, from, n, func([]byte, nvmekv.Meta) { got++ }); err != nil {
						b.Fatal(err)
					}
				}
				if got != items {
					b.Fatalf("the walk returned %d keys of %d", got, items)
				}
				b.ReportMetric(float64(got)/time.Since(t0).Seconds(), "keys/s")
			}
		})
	}
	b.Run("list", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			keys, _, err := ns.List(ctx, nil, 4+items*nvmekv.ListEntryBytes(16))
			if err != nil {
				b.Fatal(err)
			}
			if len(keys) != items {
				b.Fatalf("List returned %d keys of %d", len(keys), items)
			}
			b.ReportMetric(float64(len(keys))/time.Since(t0).Seconds(), "keys/s")
		}
	})
}
