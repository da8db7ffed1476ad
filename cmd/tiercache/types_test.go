package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestHashesAndCountersTierAndRestart: hashes and counters go through
// the tiers like strings (a hash over hot.max_value is live in hot all
// the same: hot.max_value bounds records), keep their TTL, and survive a restart in drain mode, after which they
// are read from cold, changed and read again — with go-redis, RESP2 and
// RESP3.
func TestHashesAndCountersTierAndRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Durability = "drain"
	cfg.Hot.MaxValue = 4 << 10
	sc, err := startSidecar(cfg, nopLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: cfg.Server.Socket})
	big := map[string]any{}
	for i := range 2000 {
		big[fmt.Sprint("field", i)] = fmt.Sprint("value", i)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(rc.HSet(ctx, "h:big", big).Err())
	must(rc.HSet(ctx, "h:small", "a", "1", "b", "2").Err())
	must(rc.Expire(ctx, "h:small", time.Hour).Err())
	must(rc.IncrBy(ctx, "n", 41).Err())
	must(rc.Expire(ctx, "n", time.Hour).Err())
	if where := rc.Do(ctx, "TIER", "h:big").Val(); where != "hot" {
		t.Fatalf("a hash over hot.max_value is in %v, want hot (live)", where)
	}
	if where := rc.Do(ctx, "TIER", "h:small").Val(); where != "hot" {
		t.Fatalf("a small hash is in %v, want hot", where)
	}
	rc.Close()
	must(sc.Close())

	sc2 := startTestSidecar(t, cfg)
	for _, proto := range []int{2, 3} {
		rc2 := newClient(t, sc2, proto)
		if proto == 2 {
			for _, k := range []string{"h:big", "h:small", "n"} {
				if where := rc2.Do(ctx, "TIER", k).Val(); where != "cold" {
					t.Fatalf("after a drained restart %s is in %v, want cold", k, where)
				}
			}
		}
		got, err := rc2.HGetAll(ctx, "h:big").Result()
		must(err)
		if len(got) != 2000+proto-2 || got["field1999"] != "value1999" {
			t.Fatalf("RESP%d: HGETALL h:big after restart: %d fields, field1999=%q", proto, len(got), got["field1999"])
		}
		if v := rc2.HGet(ctx, "h:small", "b").Val(); v != "2" {
			t.Fatalf("RESP%d: HGET h:small b = %q", proto, v)
		}
		if ttl := rc2.TTL(ctx, "h:small").Val(); ttl < 50*time.Minute {
			t.Fatalf("RESP%d: h:small's TTL after restart: %v", proto, ttl)
		}
		if ttl := rc2.TTL(ctx, "n").Val(); ttl < 50*time.Minute {
			t.Fatalf("RESP%d: n's TTL after restart: %v", proto, ttl)
		}
		if typ := rc2.Type(ctx, "h:big").Val(); typ != "hash" {
			t.Fatalf("RESP%d: TYPE h:big = %q", proto, typ)
		}
		if n := rc2.Incr(ctx, "n").Val(); n != int64(41+proto-1) {
			t.Fatalf("RESP%d: INCR n after restart = %d", proto, n)
		}
		must(rc2.HIncrBy(ctx, "h:big", "count", 1).Err())
		if v := rc2.HGet(ctx, "h:big", "count").Val(); v != strconv.Itoa(proto-1) {
			t.Fatalf("RESP%d: HINCRBY h:big count = %q", proto, v)
		}
		if keys, _, err := rc2.ScanType(ctx, 0, "*", 1000, "hash").Result(); err != nil || len(keys) != 2 {
			t.Fatalf("RESP%d: SCAN TYPE hash: %q %v", proto, keys, err)
		}
		if ttl := rc2.TTL(ctx, "n").Val(); ttl < 50*time.Minute {
			t.Fatalf("RESP%d: INCR dropped n's TTL: %v", proto, ttl)
		}
		if _, err := rc2.Get(ctx, "h:big").Result(); err == nil || err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
			t.Fatalf("RESP%d: GET of a hash: %v", proto, err)
		}
	}
}

// TestConcurrentIncrAndHIncrBy: several go-redis clients counting at once
// on the real sidecar lose no increment.
func TestConcurrentIncrAndHIncrBy(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	ctx := context.Background()
	const clients, each = 8, 250
	var wg sync.WaitGroup
	for range clients {
		rc := newClient(t, sc, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := rc.Incr(ctx, "c").Err(); err != nil {
					t.Error(err)
					return
				}
				if err := rc.HIncrBy(ctx, "hc", "f", 2).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rc := newClient(t, sc, 3)
	if n := rc.Get(ctx, "c").Val(); n != strconv.Itoa(clients*each) {
		t.Fatalf("INCR total %s, want %d", n, clients*each)
	}
	if n := rc.HGet(ctx, "hc", "f").Val(); n != strconv.Itoa(2*clients*each) {
		t.Fatalf("HINCRBY total %s, want %d", n, 2*clients*each)
	}
}
