package emu

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// BenchmarkKVGetBig: KV.Get of 80 MiB values (K14: read a window of 8
// chunks of 1 MiB at a time, each checked and copied out while the next
// windows are read), one at a time into a buffer reused across Gets, as
// the sidecar's cold GET of a big value reads it before the reply is sent.
// TIERCACHE_BENCH_BIG_MIB sets the value size. The store file is
// TIERCACHE_BENCH_FILE when set (kept with TIERCACHE_BENCH_KEEP=1), so
// fio can read the same file afterwards (scripts/bench-kvchunks compares
// the sidecar's GETs to it).
func BenchmarkKVGetBig(b *testing.B) {
	mib := 80
	if s := os.Getenv("TIERCACHE_BENCH_BIG_MIB"); s != "" {
		mib, _ = strconv.Atoi(s)
	}
	path := benchPath(b, "kvgetbig")
	if os.Getenv("TIERCACHE_BENCH_KEEP") == "" {
		defer os.Remove(path)
	}
	ns, err := Open(Options{Path: path, Capacity: 2 << 30})
	if err != nil {
		b.Fatal(err)
	}
	kv, err := nvmekv.NewKV(ns, nvmekv.KVOptions{MaxValueBytes: 128 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer kv.Close()
	const keys = 4
	v := make([]byte, mib<<20)
	for i := range v {
		v[i] = byte(i)
	}
	for i := range keys {
		if err := kv.Put(ctx, []byte(fmt.Sprintf("big:%d", i)), v, nvmekv.Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := kv.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, len(v))
	b.SetBytes(int64(len(v)))
	b.ResetTimer()
	for i := range b.N {
		got, _, err := kv.Get(ctx, dst[:0], []byte(fmt.Sprintf("big:%d", i%keys)))
		if err != nil || len(got) != len(v) {
			b.Fatal(len(got), err)
		}
	}
}
