package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisKeyspace: go-redis's RENAME, RENAMENX, COPY, RANDOMKEY,
// EXPIRETIME, EXPIREAT with conditions, CONFIG GET and INFO against the
// real sidecar, with keys spread over hot, warm and cold (64 KiB values,
// more than hot and warm hold): a renamed or copied key keeps its value
// and expiry wherever it was.
func TestGoRedisKeyspace(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	rc := newClient(t, sc, 3)
	ctx := context.Background()
	val := func(i int) string { return fmt.Sprintf("%05d", i) + strings.Repeat("x", 64<<10) }
	const n = 1500
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	for i := 0; i < n; i++ {
		if err := rc.Set(ctx, fmt.Sprint("ks:", i), val(i), 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rc.ExpireAt(ctx, fmt.Sprint("ks:", i), at).Err(); err != nil {
			t.Fatal(err)
		}
	}
	tiers := map[string]int{}
	for i := 0; i < n; i++ {
		k := fmt.Sprint("ks:", i)
		tiers[sc.cache.Where([]byte(k))]++
		if i%2 == 0 {
			if err := rc.Rename(ctx, k, "moved:"+k).Err(); err != nil {
				t.Fatalf("RENAME %s: %v", k, err)
			}
		} else if ok, err := rc.Copy(ctx, k, "copy:"+k, 0, false).Result(); err != nil || ok != 1 {
			t.Fatalf("COPY %s: %v %v", k, ok, err)
		}
	}
	if tiers["cold"] == 0 {
		t.Fatalf("no key was in cold alone: %v", tiers)
	}
	for i := 0; i < n; i++ {
		k := fmt.Sprint("ks:", i)
		dst := "copy:" + k
		if i%2 == 0 {
			dst = "moved:" + k
			if rc.Exists(ctx, k).Val() != 0 {
				t.Fatalf("%s still exists after RENAME", k)
			}
		} else if v := rc.Get(ctx, k).Val(); v != val(i) {
			t.Fatalf("COPY changed its source %s", k)
		}
		if v := rc.Get(ctx, dst).Val(); v != val(i) {
			t.Fatalf("%s: %d bytes, not the source's value", dst, len(v))
		}
		if got := rc.ExpireTime(ctx, dst).Val(); got != time.Duration(at.Unix())*time.Second {
			t.Fatalf("EXPIRETIME %s = %v, want %v", dst, got, at.Unix())
		}
	}
	if _, err := rc.Rename(ctx, "nosuch", "x").Result(); err == nil || err.Error() != "ERR no such key" {
		t.Fatalf("RENAME of an absent key: %v", err)
	}
	if ok := rc.RenameNX(ctx, "moved:ks:0", "copy:ks:1").Val(); ok {
		t.Fatal("RENAMENX onto an existing key renamed")
	}
	if ok := rc.ExpireGT(ctx, "copy:ks:1", time.Minute).Val(); ok {
		t.Fatal("EXPIRE GT to an earlier time applied")
	}
	if ok := rc.ExpireLT(ctx, "copy:ks:1", time.Minute).Val(); !ok {
		t.Fatal("EXPIRE LT to an earlier time did not apply")
	}
	if got := rc.PExpireTime(ctx, "copy:ks:1").Val(); got <= 0 || got > time.Duration(time.Now().Add(time.Minute).UnixMilli())*time.Millisecond {
		t.Fatalf("PEXPIRETIME after EXPIRE LT = %v", got)
	}
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		k, err := rc.RandomKey(ctx).Result()
		if err != nil || rc.Exists(ctx, k).Val() != 1 {
			t.Fatalf("RANDOMKEY = %q, %v", k, err)
		}
		seen[k] = true
	}
	if len(seen) < 100 {
		t.Fatalf("RANDOMKEY gave %d distinct keys in 200 calls out of %d", len(seen), 2*n)
	}
	cfg, err := rc.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil || cfg["maxmemory"] == "" || cfg["maxmemory"] == "0" || cfg["maxmemory-policy"] != "allkeys-lfu" {
		t.Fatalf("CONFIG GET maxmemory*: %v %v", cfg, err)
	}
	info, err := rc.Info(ctx, "persistence", "cluster", "replication").Result()
	if err != nil || !strings.Contains(info, "cluster_enabled:0") || !strings.Contains(info, "role:master") || !strings.Contains(info, "loading:0") {
		t.Fatalf("INFO persistence cluster replication: %q %v", info, err)
	}
}

// TestGoRedisWatch: go-redis's Watch (WATCH, then TxPipelined MULTI/EXEC)
// from several connections increments one counter with optimistic
// locking: every increment lands once (redis.TxFailedErr is retried), and
// an aborted transaction wrote nothing.
func TestGoRedisWatch(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	ctx := context.Background()
	const workers, each = 5, 60
	var wg sync.WaitGroup
	var aborted atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rc := newClient(t, sc, 2)
			for i := 0; i < each; i++ {
				for {
					err := rc.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "ctr").Int()
						if err != nil && !errors.Is(err, redis.Nil) {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, "ctr", n+1, 0)
							p.Set(ctx, fmt.Sprint("last:", w), i, 0)
							return nil
						})
						return err
					}, "ctr")
					if errors.Is(err, redis.TxFailedErr) {
						aborted.Add(1)
						continue
					}
					if err != nil {
						t.Errorf("Watch: %v", err)
						return
					}
					break
				}
			}
		}(w)
	}
	wg.Wait()
	rc := newClient(t, sc, 2)
	if n, err := rc.Get(ctx, "ctr").Int(); err != nil || n != workers*each {
		t.Fatalf("counter = %d (%v), want %d", n, err, workers*each)
	}
	t.Logf("%d increments, %d transactions aborted by WATCH and retried", workers*each, aborted.Load())
}
