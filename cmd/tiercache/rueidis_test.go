package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// rueidisClient is a rueidis client of the sidecar's socket. rueidis
// speaks RESP3 only (HELLO 3) and pipelines every command; client-side
// caching is off here (TestRueidisClientSideCache turns it on).
func rueidisClient(t *testing.T, socket string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{socket},
		DisableCache:      true,
		ForceSingleClient: true,
		DialCtxFn: func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return d.DialContext(ctx, "unix", addr)
		},
	})
	if err != nil {
		t.Fatalf("rueidis: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRueidis drives the sidecar with rueidis, the other Go client issue 19
// names: strings and counters, hashes, lists with a blocking pop, a
// transaction, SCAN with TYPE and a pipeline of 256 vectors.
func TestRueidis(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	startTestSidecar(t, cfg)
	c := rueidisClient(t, cfg.Server.Socket)
	ctx := context.Background()
	do := func(cmd rueidis.Completed) rueidis.RedisResult {
		t.Helper()
		r := c.Do(ctx, cmd)
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("%v: %v", cmd.Commands(), err)
		}
		return r
	}
	b := c.B()
	do(b.Set().Key("s").Value("v").Ex(time.Hour).Build())
	if v, _ := do(b.Get().Key("s").Build()).ToString(); v != "v" {
		t.Fatalf("GET = %q", v)
	}
	for i := 0; i < 10; i++ {
		do(b.Incrby().Key("n").Increment(3).Build())
	}
	if n, _ := do(b.Get().Key("n").Build()).AsInt64(); n != 30 {
		t.Fatalf("counter = %d", n)
	}
	do(b.Hset().Key("h").FieldValue().FieldValue("entry_id", "e1").FieldValue("embedding", "\x00\x01\x02").Build())
	if m, _ := do(b.Hgetall().Key("h").Build()).AsStrMap(); len(m) != 2 || m["embedding"] != "\x00\x01\x02" {
		t.Fatalf("HGETALL = %q", m)
	}
	if err := c.Do(ctx, b.Get().Key("h").Build()).Error(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Fatalf("GET of a hash: %v", err)
	}
	do(b.Rpush().Key("chat").Element("a", "b", "c").Build())
	if l, _ := do(b.Lrange().Key("chat").Start(0).Stop(-1).Build()).AsStrSlice(); strings.Join(l, ",") != "a,b,c" {
		t.Fatalf("LRANGE = %q", l)
	}
	// A blocking pop served by a push on another connection.
	done := make(chan []string, 1)
	go func() {
		r, _ := c.Do(ctx, b.Blpop().Key("q").Timeout(5).Build()).AsStrSlice()
		done <- r
	}()
	time.Sleep(50 * time.Millisecond)
	do(b.Lpush().Key("q").Element("job").Build())
	if r := <-done; strings.Join(r, ",") != "q,job" {
		t.Fatalf("BLPOP = %q", r)
	}
	// A transaction on a dedicated connection.
	var execRes []rueidis.RedisResult
	c.Dedicated(func(dc rueidis.DedicatedClient) error {
		execRes = dc.DoMulti(ctx, dc.B().Multi().Build(), dc.B().Incr().Key("n").Build(),
			dc.B().Hset().Key("h").FieldValue().FieldValue("metadata", "{}").Build(), dc.B().Exec().Build())
		return nil
	})
	if ex, err := execRes[len(execRes)-1].ToArray(); err != nil || len(ex) != 2 {
		t.Fatalf("EXEC = %v, %v", ex, err)
	}
	if n, _ := do(b.Hlen().Key("h").Build()).AsInt64(); n != 3 {
		t.Fatalf("HLEN after EXEC = %d", n)
	}
	// SCAN TYPE hash finds the hash alone.
	var hashes []string
	for cursor := uint64(0); ; {
		e, err := c.Do(ctx, b.Scan().Cursor(cursor).Type("hash").Build()).AsScanEntry()
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, e.Elements...)
		if cursor = e.Cursor; cursor == 0 {
			break
		}
	}
	if strings.Join(hashes, ",") != "h" {
		t.Fatalf("SCAN TYPE hash = %q", hashes)
	}
	// 256 vectors of 1.5 KiB in one pipeline, read back with MGET.
	cmds := make(rueidis.Commands, 0, 256)
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = fmt.Sprint("vec:", i)
		cmds = append(cmds, b.Set().Key(keys[i]).Value(strings.Repeat(string(rune('a'+i%26)), 1536)).Build())
	}
	for _, r := range c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			t.Fatal(err)
		}
	}
	vals, err := do(b.Mget().Key(keys...).Build()).AsStrSlice()
	if err != nil || len(vals) != 256 {
		t.Fatalf("MGET: %d values, %v", len(vals), err)
	}
	for i, v := range vals {
		if v != strings.Repeat(string(rune('a'+i%26)), 1536) {
			t.Fatalf("vec:%d is wrong", i)
		}
	}
}

// TestRueidisClientSideCache (issue 33): with rueidis's client-side cache
// on (CLIENT TRACKING, RESP3 invalidation pushes), a DoCache read is
// served from the client's memory until another client's write
// invalidates it, and then reads the new value.
func TestRueidisClientSideCache(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	startTestSidecar(t, cfg)
	newClient := func() rueidis.Client {
		c, err := rueidis.NewClient(rueidis.ClientOption{
			InitAddress:       []string{cfg.Server.Socket},
			ForceSingleClient: true,
			DialCtxFn: func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
				return d.DialContext(ctx, "unix", addr)
			},
		})
		if err != nil {
			t.Fatalf("rueidis: %v", err)
		}
		t.Cleanup(c.Close)
		return c
	}
	reader, writer := newClient(), newClient()
	ctx := context.Background()
	if err := writer.Do(ctx, writer.B().Set().Key("csc").Value("v1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	get := func() (string, bool) {
		r := reader.DoCache(ctx, reader.B().Get().Key("csc").Cache(), time.Minute)
		v, err := r.ToString()
		if err != nil {
			t.Fatalf("DoCache GET: %v", err)
		}
		return v, r.IsCacheHit()
	}
	if v, _ := get(); v != "v1" {
		t.Fatalf("first read %q", v)
	}
	if v, hit := get(); v != "v1" || !hit {
		t.Fatalf("second read %q, cache hit %v: want v1 from the client's cache", v, hit)
	}
	if err := writer.Do(ctx, writer.B().Set().Key("csc").Value("v2").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, _ := get()
		if v == "v2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client still reads %q 5 s after another client's write: no invalidation", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
