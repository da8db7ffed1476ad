// Command sharedload drives a fleet of replicas for scripts/bench-shared:
// each replica reads embedding vectors through its own server (a Unix
// socket of -socks, comma-separated) as MGETs of -mget keys drawn
// Zipf(-theta) out of -keys vectors, and "computes" every vector it
// misses by writing it back (one pipelined round trip of SETs after the
// MGET). A vector's bytes depend on its key alone (load.Fill at version
// 1), so every replica computes the same value, and every vector read is
// checked. All replicas run at once, -conns connections each.
//
// It prints one RESULT line per replica and one for the fleet:
// recomputes (the misses, fleet-wide: what the replicas computed),
// requested keys, hit ratio, MGET p50 and p99.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/bench/internal/load"
)

func main() {
	socks := flag.String("socks", "", "Unix sockets, one per replica, comma-separated (the same one repeated: replicas sharing a server)")
	keys := flag.Int("keys", 100000, "key space")
	size := flag.Int("value-bytes", 1536, "bytes per vector")
	conns := flag.Int("conns", 2, "connections per replica")
	mget := flag.Int("mget", 256, "keys per MGET")
	batches := flag.Int("batches", 1000, "MGETs per replica")
	theta := flag.Float64("theta", 0.99, "Zipf skew")
	seed := flag.Uint64("seed", 1, "seed (vary it per round)")
	prefix := flag.String("prefix", "emb:", "key prefix")
	flag.Parse()
	if *socks == "" || *size < load.HeaderBytes || *keys < 2 || *conns < 1 || *mget < 1 {
		flag.Usage()
		os.Exit(2)
	}
	paths := strings.Split(*socks, ",")
	type replica struct {
		requested, hits, recomputes atomic.Int64
		lat                         load.Latencies
		cnt                         load.Counts
	}
	reps := make([]*replica, len(paths))
	var wg sync.WaitGroup
	t0 := time.Now()
	for ri, path := range paths {
		r := &replica{}
		reps[ri] = r
		rc := load.NewRedis(path, *conns)
		defer rc.Close()
		d := load.RedisDialer(rc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := load.Each(d, *conns, func(g int, c load.Conn) {
				ctx := context.Background()
				rnd := rand.New(rand.NewPCG(*seed, uint64(ri)<<16|uint64(g)))
				z := load.NewZipf(rnd, *keys, *theta)
				names := make([]string, *mget)
				idx := make([]int, *mget)
				var scratch []byte
				n := *batches / *conns
				if g < *batches%*conns {
					n++
				}
				ds := make([]time.Duration, 0, n)
				for ; n > 0; n-- {
					for j := range idx {
						idx[j] = z.Next()
						names[j] = load.Key(*prefix, idx[j])
					}
					t := time.Now()
					res, err := rc.MGet(ctx, names...).Result()
					ds = append(ds, time.Since(t))
					if err != nil {
						r.cnt.Fail(err)
						continue
					}
					var missed []int
					var missedNames []string
					for j, v := range res {
						s, ok := v.(string)
						if !ok {
							if !slices.Contains(missed, idx[j]) {
								missed, missedNames = append(missed, idx[j]), append(missedNames, names[j])
							}
							continue
						}
						r.hits.Add(1)
						var ver uint64
						if ver, scratch, err = load.Check([]byte(s), idx[j], *size, scratch); err != nil || ver != 1 {
							r.cnt.Fail(fmt.Errorf("%s: version %d, %v", names[j], ver, err))
						}
					}
					r.requested.Add(int64(len(names)))
					if len(missed) == 0 {
						continue
					}
					vals := make([][]byte, len(missed))
					for j, i := range missed {
						vals[j] = make([]byte, *size)
						load.Fill(vals[j], i, 1) // the computation: the same bytes on every replica
					}
					r.recomputes.Add(int64(len(missed)))
					if err := c.SetMany(ctx, missedNames, vals); err != nil {
						r.cnt.Fail(fmt.Errorf("write back: %w", err))
					}
				}
				r.lat.Add(ds)
			})
			if err != nil {
				r.cnt.Fail(err)
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	var fleet load.Latencies
	var req, hits, rec, errs, mism int64
	code := 0
	for i, r := range reps {
		load.Result("replica", i, "requested", r.requested.Load(), "hits", r.hits.Load(), "recomputes", r.recomputes.Load(),
			"p50_us", r.lat.Quantile(0.5).Microseconds(), "p99_us", r.lat.Quantile(0.99).Microseconds(),
			"errors", r.cnt.Errors.Load(), "mismatches", r.cnt.Mismatches.Load())
		req, hits, rec = req+r.requested.Load(), hits+r.hits.Load(), rec+r.recomputes.Load()
		errs, mism = errs+r.cnt.Errors.Load(), mism+r.cnt.Mismatches.Load()
		fleet.Merge(&r.lat)
		code = max(code, r.cnt.ExitCode())
	}
	ratio := 0.0
	if req > 0 {
		ratio = float64(hits) / float64(req)
	}
	load.Result("fleet", len(reps), "requested", req, "hits", hits, "hit_ratio", ratio, "recomputes", rec,
		"p50_us", fleet.Quantile(0.5).Microseconds(), "p99_us", fleet.Quantile(0.99).Microseconds(),
		"load_s", el.Seconds(), "errors", errs, "mismatches", mism)
	os.Exit(code)
}
