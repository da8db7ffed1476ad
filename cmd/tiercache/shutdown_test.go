package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestShutdownCommandStops checks C3's SHUTDOWN: the real sidecar, sent
// SHUTDOWN twice (the second from a connection opened before the first),
// shuts down as on one SIGTERM and exits 0, its log saying why, and a
// restart on the same data directory (durability drain) serves every key.
func TestShutdownCommandStops(t *testing.T) {
	sock, data := shortSocket(t), t.TempDir()
	args := "-metrics off -log-level info -durability drain -data " + data
	p := startServe(t, sock, args)
	ctx := context.Background()
	dial := func() *redis.Client {
		return redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, MaxRetries: -1})
	}
	rc, other := dial(), dial()
	defer rc.Close()
	defer other.Close()
	for i := 0; i < 50; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// Redis answers nothing and closes the connection: go-redis reports it.
	if err := rc.Do(ctx, "SHUTDOWN").Err(); err == nil {
		t.Fatal("SHUTDOWN answered")
	}
	_ = other.Do(ctx, "SHUTDOWN", "NOSAVE").Err() // the connection may be closed already
	if code := p.exitOf(t); code != 0 {
		t.Fatalf("exit %d after SHUTDOWN, want 0:\n%s", code, p.output())
	}
	if out := p.output(); !strings.Contains(out, "SHUTDOWN command") || !strings.Contains(out, "shut down cleanly") {
		t.Errorf("the log does not say SHUTDOWN stopped it cleanly:\n%s", out)
	}

	startServe(t, sock, args)
	rc2 := dial()
	defer rc2.Close()
	for i := 0; i < 50; i++ {
		if v, err := rc2.Get(ctx, fmt.Sprintf("k%d", i)).Result(); err != nil || v != fmt.Sprintf("v%d", i) {
			t.Fatalf("after SHUTDOWN and a restart, k%d = %q, %v", i, v, err)
		}
	}
}
