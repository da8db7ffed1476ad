package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestKVChunkAtDefaultMaxValue: with the default max_value (512 MiB, as
// redis-server's proto-max-bulk-len), an 80 MiB KV-cache chunk (LMCache's
// 256-token chunk of a 70B model in fp16) and its metadata key are stored
// through go-redis and read back whole, from cold (no DRAM log takes it).
func TestKVChunkAtDefaultMaxValue(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	if def := defaultConfig(); def.MaxValue != 512<<20 || def.Server.MaxBulk < def.MaxValue {
		t.Fatalf("default max_value %d, server.max_bulk %d: want 512 MiB and a bulk limit at least that", def.MaxValue, def.Server.MaxBulk)
	}
	startTestSidecar(t, cfg)
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: cfg.Server.Socket})
	defer rc.Close()
	ctx := context.Background()
	chunk := bytes.Repeat([]byte("kv-chunk"), 80<<20/8)
	chunk[0], chunk[len(chunk)-1] = 'A', 'Z'
	if err := rc.Set(ctx, "c0metadata", bytes.Repeat([]byte("m"), 256), 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "c0kv_bytes", chunk, 0).Err(); err != nil {
		t.Fatalf("SET of an 80 MiB chunk: %v", err)
	}
	got, err := rc.Get(ctx, "c0kv_bytes").Bytes()
	if err != nil || !bytes.Equal(got, chunk) {
		t.Fatalf("GET of the 80 MiB chunk: %d bytes, %v; want the chunk SET", len(got), err)
	}
	if n, err := rc.StrLen(ctx, "c0metadata").Result(); err != nil || n != 256 {
		t.Fatalf("STRLEN metadata = %d, %v", n, err)
	}
}
