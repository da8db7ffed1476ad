package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestPeakRSSWithinBudgetAggregates is TestPeakRSSWithinBudget for the
// live structures (tier T45): hashes, lists, sets and sorted sets changed
// in place on the Go heap, more of them than DRAM holds (Zipf-chosen keys,
// so some grow large and stay hot while the LFU evicts the rest, and live
// structures are demoted to warm and made live again), keep the sidecar's
// peak RSS within the same bound: their heap is charged to hot, whose
// arena gives back as many bytes.
func TestPeakRSSWithinBudgetAggregates(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the churn writes about 100 MB of aggregate items through the sidecar")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is in the sidecar's RSS (this binary is its own sidecar)")
	}
	p, rc := startBudgetSidecar(t)
	ctx := context.Background()
	const keys = 4000
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 1, keys-1)
	val := make([]byte, 300)
	var liveSeen, demoted int64
	for round := range 1000 {
		pl := rc.Pipeline()
		for range 256 {
			i := int(z.Uint64())
			k := fmt.Sprint("agg:", i)
			for j := range val {
				val[j] = byte(r.Uint32())
			}
			m := strconv.Itoa(r.IntN(2000))
			switch i % 4 {
			case 0: // at most 100 fields: a demoted hash fits a warm record
				pl.HSet(ctx, k, strconv.Itoa(r.IntN(100)), val)
			case 1:
				pl.RPush(ctx, k, val)
				if r.IntN(8) == 0 {
					pl.LTrim(ctx, k, -1500, -1)
				}
			case 2:
				pl.SAdd(ctx, k, append([]byte(m+":"), val[:100]...))
			default:
				pl.ZAdd(ctx, k, redis.Z{Score: r.Float64(), Member: m + ":" + string(val[:100])})
			}
		}
		if _, err := pl.Exec(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if round%100 == 0 {
			info, err := rc.Info(ctx, "tiers").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(info, "\r\n") {
				if v, ok := strings.CutPrefix(line, "dram_live_bytes:"); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					liveSeen = max(liveSeen, n)
				}
				if v, ok := strings.CutPrefix(line, "dram_live_demoted:"); ok {
					demoted, _ = strconv.ParseInt(v, 10, 64)
				}
			}
		}
	}
	if liveSeen == 0 || demoted == 0 {
		t.Fatalf("live structures seen up to %d bytes, %d demoted: the test did not exercise their charge to hot", liveSeen, demoted)
	}
	checkPeakRSS(t, p, rc, fmt.Sprintf("live structures up to %.1f MB, %d demoted", float64(liveSeen)/1e6, demoted))
}
