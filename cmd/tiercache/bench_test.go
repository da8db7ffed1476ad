package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// BenchmarkPipelinedColdGet: clients pipelining 16 GETs of 4 KiB values
// that only the cold store holds (the emulated namespace on a file under
// $TIERCACHE_BENCH_DIR, default a temporary directory), with the server's
// cold GET batching on (server.cold_get_batch 128, the default) and off
// (0): the peer of each figure is the other, on the same store in the same
// run. Promotion is made impossible, so every read goes to the device.
// 4 connections of 16 each keep up to 64 reads in flight with batching,
// 4 without. Reports GETs/s.
func BenchmarkPipelinedColdGet(b *testing.B) {
	const (
		keys  = 20000
		size  = 4096
		depth = 16
		conns = 4
	)
	dir := os.Getenv("TIERCACHE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		dir, _ = os.MkdirTemp(dir, "coldget-")
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	config := func(batch int) *Config {
		cfg := testConfig(b, dir)
		cfg.Hot.Bytes, cfg.Hot.MaxValue = 1<<20, 64<<10
		cfg.Warm.Bytes = 0
		cfg.Durability = "drain"
		cfg.Policy.PromoteHotHits, cfg.Policy.PromoteWarmHits, cfg.Policy.SizeUnit = 16, 16, 1
		cfg.Metrics.Listen = ""
		cfg.Server.ColdGetBatch = batch
		return cfg
	}
	ctx := context.Background()
	val := func(i int) string { return fmt.Sprintf("%08d", i) + strings.Repeat("v", size-8) }
	name := func(i int) string { return fmt.Sprintf("cold:%06d", i) }
	sc, err := startSidecar(config(128), nopLogger())
	if err != nil {
		b.Fatal(err)
	}
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sc.cfg.Server.Socket})
	for i := 0; i < keys; i += 100 {
		pipe := rc.Pipeline()
		for j := i; j < i+100; j++ {
			pipe.Set(ctx, name(j), val(j), 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	rc.Close()
	if err := sc.Close(); err != nil { // drain: every key goes to the cold store
		b.Fatal(err)
	}
	for _, batch := range []int{128, 0} {
		b.Run(fmt.Sprintf("cold_get_batch=%d", batch), func(b *testing.B) {
			sc := startTestSidecar(b, config(batch))
			clients := make([]*redis.Client, conns)
			for i := range clients {
				clients[i] = redis.NewClient(&redis.Options{Network: "unix", Addr: sc.cfg.Server.Socket, PoolSize: 1})
				defer clients[i].Close()
			}
			b.SetBytes(size)
			b.ResetTimer()
			var wg sync.WaitGroup
			var mu sync.Mutex
			left := b.N
			for w, rc := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 1))
					for {
						mu.Lock()
						n := min(left, depth)
						left -= n
						mu.Unlock()
						if n == 0 {
							return
						}
						pipe := rc.Pipeline()
						idx := make([]int, n)
						cmds := make([]*redis.StringCmd, n)
						for i := range cmds {
							idx[i] = rng.IntN(keys)
							cmds[i] = pipe.Get(ctx, name(idx[i]))
						}
						if _, err := pipe.Exec(ctx); err != nil {
							b.Error(err)
							return
						}
						for i, c := range cmds {
							if v := c.Val(); len(v) != size || v[:8] != val(idx[i])[:8] {
								b.Errorf("GET %s = %.12q", name(idx[i]), v)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "GETs/s")
			st := sc.srv.Stats()
			if batch > 0 && b.N >= 100 && st.ColdGetBatched == 0 {
				b.Error("no GET was batched")
			}
		})
	}
}
