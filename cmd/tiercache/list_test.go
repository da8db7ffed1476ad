package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisListsThroughTiers: a list written with go-redis goes hot ->
// warm -> cold as other keys push it out (other lists, whose live
// structures take hot's room: tier T45), keeps its elements, kind and TTL
// on the way back, and survives a restart in drain mode; a list over
// hot.max_value is live in hot too (hot.max_value bounds records; a live
// structure is charged by its heap).
func TestGoRedisListsThroughTiers(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Hot.Bytes = 4 << 20
	cfg.Warm.Bytes = 8 << 20
	sc, rc := openDrain(t, cfg)
	ctx := context.Background()
	var want []string
	for i := 0; i < 50; i++ {
		want = append(want, fmt.Sprintf("message %d", i))
	}
	if err := rc.RPush(ctx, "chat", toAny(want)...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Expire(ctx, "chat", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("b", 4<<10)
	for i := 0; i < 300; i++ { // 1.2 MiB: over hot.max_value (1 MiB)
		if err := rc.RPush(ctx, "big", fmt.Sprintf("%d:%s", i, big)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if where := rc.Do(ctx, "TIER", "big").Val(); where != "hot" {
		t.Errorf("a 1.2 MiB list is in %v, want hot (live, over hot.max_value 1 MiB)", where)
	}
	// Filler lists push the list out of hot (live structures past what hot
	// can withhold are demoted, least recently used first); a string over
	// hot.max_value per round is written into warm itself and pushes warm's
	// oldest segment to cold. Small fillers alone would not do it reliably:
	// once warm is full, a value seen once skips it for cold (T20), and
	// whether the list left warm before that depends on timing.
	small, large := strings.Repeat("f", 8<<10), strings.Repeat("F", 1<<20+1<<19)
	where := ""
	for i := 0; i < 200 && where != "cold"; i++ {
		for j := 0; j < 100; j++ {
			if err := rc.RPush(ctx, fmt.Sprintf("filler:%d:%d", i, j), small).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rc.Set(ctx, fmt.Sprintf("large:%d", i), large, 0).Err(); err != nil {
			t.Fatal(err)
		}
		where = rc.Do(ctx, "TIER", "chat").Val().(string)
	}
	if where != "cold" {
		t.Fatalf("the list never reached cold (TIER %q)", where)
	}
	check := func(rc *redis.Client, stage string) {
		t.Helper()
		if got, err := rc.LRange(ctx, "chat", 0, -1).Result(); err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s: LRANGE chat = %d elements, %v", stage, len(got), err)
		}
		if ttl := rc.TTL(ctx, "chat").Val(); ttl < 50*time.Minute || ttl > time.Hour {
			t.Errorf("%s: TTL %v, want about an hour", stage, ttl)
		}
		if typ := rc.Type(ctx, "chat").Val(); typ != "list" {
			t.Errorf("%s: TYPE %q", stage, typ)
		}
		if n := rc.LLen(ctx, "big").Val(); n != 300 {
			t.Errorf("%s: LLEN big = %d", stage, n)
		}
		if v := rc.LIndex(ctx, "big", -1).Val(); !strings.HasPrefix(v, "299:") {
			t.Errorf("%s: LINDEX big -1 = %.10q", stage, v)
		}
	}
	check(rc, "from cold")
	want = append([]string{"first"}, want...)
	if err := rc.LPush(ctx, "chat", "first").Err(); err != nil {
		t.Fatal(err)
	}
	check(rc, "after a push")
	rc.Close()
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	sc2 := startTestSidecar(t, cfg)
	check(newClient(t, sc2, 3), "after a drain restart")
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestGoRedisBlockingPop: go-redis's BLPOP and BLMove on one connection
// are answered by a push on another; a timeout answers redis.Nil.
func TestGoRedisBlockingPop(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	ctx := context.Background()
	waiter, pusher := newClient(t, sc, 2), newClient(t, sc, 3)
	done := make(chan []string, 1)
	go func() {
		v, err := waiter.BLPop(ctx, 0, "jobs").Result()
		if err != nil {
			v = []string{err.Error()}
		}
		done <- v
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(pusher.Info(ctx, "clients").Val(), "blocked_clients:1"); {
		if time.Now().After(deadline) {
			t.Fatal("BLPOP never blocked")
		}
		time.Sleep(time.Millisecond)
	}
	if err := pusher.RPush(ctx, "jobs", "j1").Err(); err != nil {
		t.Fatal(err)
	}
	if v := <-done; !slices.Equal(v, []string{"jobs", "j1"}) {
		t.Errorf("BLPOP: %q", v)
	}
	if _, err := waiter.BLPop(ctx, 50*time.Millisecond, "jobs").Result(); err != redis.Nil {
		t.Errorf("BLPOP timeout: %v, want redis.Nil", err)
	}
	pusher.RPush(ctx, "src", "a", "b")
	if v, err := waiter.BLMove(ctx, "src", "dst", "RIGHT", "LEFT", time.Second).Result(); err != nil || v != "b" {
		t.Errorf("BLMOVE: %q, %v", v, err)
	}
	if v := pusher.LRange(ctx, "dst", 0, -1).Val(); !slices.Equal(v, []string{"b"}) {
		t.Errorf("dst after BLMOVE: %q", v)
	}
}
