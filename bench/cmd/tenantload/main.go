// Command tenantload is scripts/bench-tenants' client: tenant a reads its
// working set (a: keys, part of it only in cold) from one connection,
// unpipelined, in a quiet phase and then in a phase during which tenant b
// writes new b: keys as fast as its writer connections go (pipelined). It prints one
// line of key=value figures: a's GET latency percentiles (µs) and hit
// ratio in each phase, and the bytes b wrote.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	sock := flag.String("s", "", "the sidecar's Unix socket")
	aKeys := flag.Int("akeys", 16000, "a's keys")
	aValue := flag.Int("avalue", 1024, "a's value bytes")
	bValue := flag.Int("bvalue", 4096, "b's value bytes")
	bBytes := flag.Int64("bbytes", 1<<40, "what b writes at most in the flood, bytes")
	writers := flag.Int("writers", 2, "b's writer connections")
	pipe := flag.Int("pipe", 32, "b's SETs per pipeline")
	phase := flag.Duration("phase", 15*time.Second, "each phase's length")
	flag.Parse()
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: *sock, PoolSize: *writers + 2, ReadTimeout: 10 * time.Second})
	defer rc.Close()
	val := make([]byte, *aValue)
	for i := range *aKeys {
		if err := rc.Set(ctx, aKey(i), val, 0).Err(); err != nil {
			fail(err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	read := func(d time.Duration) (lat []time.Duration, hits int) {
		hot := *aKeys / 2 // 80% of reads over half the keys, 20% over the rest
		for end := time.Now().Add(d); time.Now().Before(end); {
			i := r.IntN(hot)
			if r.IntN(5) == 0 {
				i = hot + r.IntN(*aKeys-hot)
			}
			t0 := time.Now()
			_, err := rc.Get(ctx, aKey(i)).Bytes()
			lat = append(lat, time.Since(t0))
			switch err {
			case nil:
				hits++
			case redis.Nil:
			default:
				fail(err)
			}
		}
		return lat, hits
	}
	read(*phase / 3) // warm-up: a's keys settle
	ql, qh := read(*phase)
	var written atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	bv := make([]byte, *bValue)
	var next atomic.Int64
	for range *writers {
		wg.Go(func() {
			for written.Load() < *bBytes {
				select {
				case <-stop:
					return
				default:
				}
				pl := rc.Pipeline()
				for range *pipe {
					pl.Set(ctx, fmt.Sprintf("b:%09d", next.Add(1)), bv, 0)
				}
				if _, err := pl.Exec(ctx); err != nil {
					fail(err)
				}
				written.Add(int64(*bValue * *pipe))
			}
		})
	}
	fl, fh := read(*phase)
	close(stop)
	wg.Wait()
	fmt.Printf("quiet_p50_us=%.0f quiet_p99_us=%.0f quiet_hit=%.4f quiet_reads=%d flood_p50_us=%.0f flood_p99_us=%.0f flood_hit=%.4f flood_reads=%d b_bytes=%d\n",
		pct(ql, 50), pct(ql, 99), float64(qh)/float64(len(ql)), len(ql), pct(fl, 50), pct(fl, 99), float64(fh)/float64(len(fl)), len(fl), written.Load())
}

func aKey(i int) string { return fmt.Sprintf("a:%06d", i) }

// pct is the p-th percentile of lat, in µs.
func pct(lat []time.Duration, p int) float64 {
	slices.Sort(lat)
	return float64(lat[(len(lat)-1)*p/100]) / float64(time.Microsecond)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tenantload:", err)
	os.Exit(1)
}
