package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func newClient(t testing.TB, sc *sidecar, proto int) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sc.cfg.Server.Socket, Protocol: proto,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { rc.Close() })
	return rc
}

// TestGoRedis drives the real sidecar with go-redis v9 over the socket, in
// RESP2 and in RESP3 (HELLO 3).
func TestGoRedis(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			ctx := context.Background()
			rc := newClient(t, sc, proto)
			p := fmt.Sprintf("p%d:", proto)
			if err := rc.Set(ctx, p+"k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if v, err := rc.Get(ctx, p+"k").Result(); err != nil || v != "v" {
				t.Fatalf("GET: %q %v", v, err)
			}
			if _, err := rc.Get(ctx, p+"missing").Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("GET missing: %v", err)
			}
			if err := rc.MSet(ctx, p+"a", "1", p+"b", "2").Err(); err != nil {
				t.Fatal(err)
			}
			vals, err := rc.MGet(ctx, p+"a", p+"nope", p+"b").Result()
			if err != nil || vals[0] != "1" || vals[1] != nil || vals[2] != "2" {
				t.Fatalf("MGET: %v %v", vals, err)
			}
			// An empty value is a value, not a miss.
			if err := rc.Set(ctx, p+"empty", "", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if vals, err := rc.MGet(ctx, p+"empty", p+"nope").Result(); err != nil || vals[0] != "" || vals[1] != nil {
				t.Fatalf("MGET of an empty value: %#v %v", vals, err)
			}
			if n, err := rc.Exists(ctx, p+"a", p+"b", p+"nope").Result(); err != nil || n != 2 {
				t.Fatalf("EXISTS: %d %v", n, err)
			}
			if n, err := rc.Del(ctx, p+"a", p+"nope").Result(); err != nil || n != 1 {
				t.Fatalf("DEL: %d %v", n, err)
			}
			// SET options.
			if ok, err := rc.SetNX(ctx, p+"k", "other", 0).Result(); err != nil || ok {
				t.Fatalf("SETNX on existing: %v %v", ok, err)
			}
			if ok, err := rc.SetXX(ctx, p+"k", "v2", 0).Result(); err != nil || !ok {
				t.Fatalf("SETXX: %v %v", ok, err)
			}
			if old, err := rc.SetArgs(ctx, p+"k", "v3", redis.SetArgs{Get: true}).Result(); err != nil || old != "v2" {
				t.Fatalf("SET GET: %q %v", old, err)
			}
			// TTLs.
			if err := rc.Set(ctx, p+"t", "x", 100*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
			if d, err := rc.TTL(ctx, p+"t").Result(); err != nil || d <= 90*time.Second || d > 100*time.Second {
				t.Fatalf("TTL: %v %v", d, err)
			}
			if d, err := rc.PTTL(ctx, p+"t").Result(); err != nil || d <= 90*time.Second {
				t.Fatalf("PTTL: %v %v", d, err)
			}
			if ok, err := rc.Persist(ctx, p+"t").Result(); err != nil || !ok {
				t.Fatalf("PERSIST: %v %v", ok, err)
			}
			if d, err := rc.TTL(ctx, p+"t").Result(); err != nil || d != -1 {
				t.Fatalf("TTL after PERSIST: %v %v", d, err)
			}
			if ok, err := rc.Expire(ctx, p+"t", time.Hour).Result(); err != nil || !ok {
				t.Fatalf("EXPIRE: %v %v", ok, err)
			}
			// GETEX and GETDEL: read and change in one step.
			if v, err := rc.GetEx(ctx, p+"t", 2*time.Hour).Result(); err != nil || v != "x" {
				t.Fatalf("GETEX EX: %q %v", v, err)
			}
			if d, err := rc.TTL(ctx, p+"t").Result(); err != nil || d <= time.Hour {
				t.Fatalf("TTL after GETEX EX 2h: %v %v", d, err)
			}
			if v, err := rc.Do(ctx, "GETEX", p+"t", "PERSIST").Text(); err != nil || v != "x" {
				t.Fatalf("GETEX PERSIST: %q %v", v, err)
			}
			if d, err := rc.TTL(ctx, p+"t").Result(); err != nil || d != -1 {
				t.Fatalf("TTL after GETEX PERSIST: %v %v", d, err)
			}
			if err := rc.Set(ctx, p+"gd", "once", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if v, err := rc.GetDel(ctx, p+"gd").Result(); err != nil || v != "once" {
				t.Fatalf("GETDEL: %q %v", v, err)
			}
			if _, err := rc.GetDel(ctx, p+"gd").Result(); err != redis.Nil {
				t.Fatalf("GETDEL of a deleted key: %v, want redis.Nil", err)
			}
			if ok, err := rc.PExpire(ctx, p+"t", 1500*time.Millisecond).Result(); err != nil || !ok {
				t.Fatalf("PEXPIRE: %v %v", ok, err)
			}
			if err := rc.Set(ctx, p+"short", "x", 50*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for rc.Exists(ctx, p+"short").Val() != 0 {
				if time.Now().After(deadline) {
					t.Fatal("a 50 ms key still exists after 10 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if d, err := rc.TTL(ctx, p+"short").Result(); err != nil || d != -2 {
				t.Fatalf("TTL of an expired key: %v %v", d, err)
			}
			// Binary values with CR, LF and NUL, in keys too.
			bin := []byte("a\r\nb\x00c\r\n\x00\xff")
			if err := rc.Set(ctx, p+"bin\r\n\x00", bin, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if v, err := rc.Get(ctx, p+"bin\r\n\x00").Bytes(); err != nil || !bytes.Equal(v, bin) {
				t.Fatalf("binary: %q %v", v, err)
			}
			// Pipelines.
			pipe := rc.Pipeline()
			for i := 0; i < 500; i++ {
				pipe.Set(ctx, fmt.Sprintf("%spipe%d", p, i), i, 0)
			}
			gets := make([]*redis.StringCmd, 500)
			for i := range gets {
				gets[i] = pipe.Get(ctx, fmt.Sprintf("%spipe%d", p, i))
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			for i, g := range gets {
				if g.Val() != fmt.Sprint(i) {
					t.Fatalf("pipelined GET %d: %q %v", i, g.Val(), g.Err())
				}
			}
			// MULTI/EXEC as go-redis's TxPipelined sends it.
			cmds, err := rc.TxPipelined(ctx, func(tx redis.Pipeliner) error {
				tx.Set(ctx, p+"tx", "a", 0)
				tx.Do(ctx, "NOSUCHCMD", p+"nope") // unknown: the whole block is refused
				return nil
			})
			if err == nil {
				t.Fatalf("a MULTI block with an unknown command ran: %v", cmds)
			}
			cmds, err = rc.TxPipelined(ctx, func(tx redis.Pipeliner) error {
				tx.Set(ctx, p+"tx", "a", 0)
				tx.Get(ctx, p+"tx")
				return nil
			})
			if err != nil || len(cmds) != 2 || cmds[1].(*redis.StringCmd).Val() != "a" {
				t.Fatalf("TxPipelined: %v %v", cmds, err)
			}
			// Errors keep the connection.
			if err := rc.Do(ctx, "NOSUCH", "x").Err(); err == nil || !strings.Contains(err.Error(), "unknown command 'NOSUCH'") {
				t.Fatalf("unknown command: %v", err)
			}
			if err := rc.Do(ctx, "GET").Err(); err == nil || !strings.Contains(err.Error(), "wrong number of arguments for 'get' command") {
				t.Fatalf("arity: %v", err)
			}
			if tr, err := rc.Do(ctx, "TIER", p+"k").Text(); err != nil || (tr != "hot" && tr != "warm" && tr != "cold") {
				t.Fatalf("TIER: %q %v", tr, err)
			}
			info, err := rc.Info(ctx, "tiers").Result()
			if err != nil || !strings.Contains(info, "tier_hot_hits:") || !strings.Contains(info, "cold_backend:emulated") {
				t.Fatalf("INFO tiers: %q %v", info, err)
			}
			n, err := rc.DBSize(ctx).Result()
			if err != nil || n < 500 {
				t.Fatalf("DBSIZE: %d %v", n, err)
			}
			// INFO's O(1) count is DBSIZE plus the expired keys the sweep has
			// not removed yet (at most the few this test gave a TTL).
			ks, err := rc.Info(ctx, "keyspace").Result()
			var k int64
			if i := strings.Index(ks, "db0:keys="); err != nil || i < 0 {
				t.Fatalf("INFO keyspace %q (err %v)", ks, err)
			} else if _, err := fmt.Sscanf(ks[i:], "db0:keys=%d,", &k); err != nil || k < n || k > n+10 {
				t.Fatalf("INFO keyspace keys=%d (%v), DBSIZE %d", k, err, n)
			}
		})
	}
}

// TestGoRedisLargeValues: values up to 64 MiB round-trip, and a
// 10,000-key MGET returns every value in order.
func TestGoRedisLargeValues(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	ctx := context.Background()
	rc := newClient(t, sc, 3)
	sizes := []int{0, 1, 100 << 10, 1<<20 + 1, 5 << 20, 64 << 20}
	if testing.Short() {
		sizes = sizes[:5]
	}
	for _, n := range sizes {
		v := bytes.Repeat([]byte{'z', '\r', '\n', 0}, n/4+1)[:n]
		k := fmt.Sprintf("big%d", n)
		if err := rc.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatalf("SET %d bytes: %v", n, err)
		}
		got, err := rc.Get(ctx, k).Bytes()
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("GET %d bytes: got %d bytes, %v", n, len(got), err)
		}
	}
	const n = 10000
	kv := make([]any, 0, 2*n)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("mkey:%05d", i)
		kv = append(kv, keys[i], fmt.Sprintf("value-%d", i))
	}
	if err := rc.MSet(ctx, kv...).Err(); err != nil {
		t.Fatal(err)
	}
	vals, err := rc.MGet(ctx, keys...).Result()
	if err != nil || len(vals) != n {
		t.Fatalf("MGET %d keys: %d values, %v", n, len(vals), err)
	}
	for i, v := range vals {
		if v != fmt.Sprintf("value-%d", i) {
			t.Fatalf("MGET value %d = %v", i, v)
		}
	}
}

// openDrain starts cfg's sidecar in drain mode and a go-redis client to
// it; the caller closes both (a restart test does, midway).
func openDrain(t testing.TB, cfg *Config) (*sidecar, *redis.Client) {
	t.Helper()
	cfg.Durability = "drain"
	sc, err := startSidecar(cfg, nopLogger())
	if err != nil {
		t.Fatal(err)
	}
	return sc, redis.NewClient(&redis.Options{Network: "unix", Addr: cfg.Server.Socket})
}

// TestRestartKeepsColdKeys: with durability drain, a clean shutdown puts
// every key in the cold store and a restart on the same data dir serves them.
func TestRestartKeepsColdKeys(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	sc, rc := openDrain(t, cfg)
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("persist:%d", i), fmt.Sprintf("v%d", i), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rc.Close()
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	sc2 := startTestSidecar(t, cfg)
	rc2 := newClient(t, sc2, 2)
	// Pipelined GETs of keys only the cold store holds: the first reads the
	// device, the rest go to it together (server.Options.ColdGetBatch).
	pipe := rc2.Pipeline()
	var gets []*redis.StringCmd
	for i := 0; i < 50; i++ {
		gets = append(gets, pipe.Get(ctx, fmt.Sprintf("persist:%d", i)))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i, g := range gets {
		if v, err := g.Result(); err != nil || v != fmt.Sprintf("v%d", i) {
			t.Fatalf("after restart, pipelined GET persist:%d = %q, %v", i, v, err)
		}
	}
	info := rc2.Info(ctx, "stats").Val()
	if !strings.Contains(info, "cold_get_batches:") || strings.Contains(info, "cold_get_batched:0\r") {
		t.Errorf("50 pipelined cold GETs were not batched:\n%s", info)
	}
	for i := 0; i < 100; i++ {
		if v, err := rc2.Get(ctx, fmt.Sprintf("persist:%d", i)).Result(); err != nil || v != fmt.Sprintf("v%d", i) {
			t.Fatalf("after restart, persist:%d = %q, %v", i, v, err)
		}
	}
}

// TestFlushAllAfterRestart: FLUSHALL in a run that never touched the keys
// an earlier run left in cold removes them too: they do not come back at
// the next restart.
func TestFlushAllAfterRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Durability = "drain"
	ctx := context.Background()
	run := func(f func(rc *redis.Client)) {
		sc, err := startSidecar(cfg, nopLogger())
		if err != nil {
			t.Fatal(err)
		}
		rc := redis.NewClient(&redis.Options{Network: "unix", Addr: cfg.Server.Socket})
		f(rc)
		rc.Close()
		if err := sc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	run(func(rc *redis.Client) {
		for i := 0; i < 30; i++ {
			if err := rc.Set(ctx, fmt.Sprintf("old:%d", i), strings.Repeat("v", 100*i), 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
	run(func(rc *redis.Client) {
		if err := rc.FlushAll(ctx).Err(); err != nil {
			t.Fatalf("FLUSHALL: %v", err)
		}
	})
	run(func(rc *redis.Client) {
		for i := 0; i < 30; i++ {
			if v, err := rc.Get(ctx, fmt.Sprintf("old:%d", i)).Result(); err != redis.Nil {
				t.Fatalf("old:%d after FLUSHALL and a restart = %.20q, %v", i, v, err)
			}
		}
	})
}

// TestGoRedisScan: go-redis's SCAN iterator and KEYS over the real tiers,
// with values spread over hot and the lower tiers: every key once, MATCH applied,
// and a key deleted before the scan never returned.
func TestGoRedisScan(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	rc := newClient(t, sc, 3)
	ctx := context.Background()
	val := strings.Repeat("x", 64<<10) // 3000 x 64 KiB: more than hot and warm hold
	for i := 0; i < 3000; i++ {
		if err := rc.Set(ctx, fmt.Sprint("scan:", i), val, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rc.Del(ctx, "scan:7")
	seen := map[string]int{}
	it := rc.Scan(ctx, 0, "scan:*", 100).Iterator()
	for it.Next(ctx) {
		seen[it.Val()]++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2999 || seen["scan:7"] != 0 {
		t.Fatalf("SCAN returned %d distinct keys (want 2999), scan:7 %d times", len(seen), seen["scan:7"])
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("SCAN returned %s %d times", k, n)
		}
	}
	keys, err := rc.Keys(ctx, "scan:1?").Result()
	if err != nil || len(keys) != 10 {
		t.Fatalf("KEYS scan:1? = %d keys, %v", len(keys), err)
	}
	// The keys were spread over the tiers: not all of them were in hot.
	if st := sc.cache.Stats(); st.Tiers[0].Items >= 2999 {
		t.Fatalf("every key was in hot, so the scan did not meet the other tiers: %+v", st.Tiers)
	}
}

// TestMetricsEndpoint: /metrics serves per-tier, per-command, flusher,
// device (stalled I/O among them), NUMA and Go runtime metrics.
func TestMetricsEndpoint(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	ctx := context.Background()
	rc := newClient(t, sc, 2)
	rc.Set(ctx, "m", "v", 0)
	rc.Get(ctx, "m")
	resp, err := http.Get("http://" + sc.httpLn.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`tiercache_tier_hits_total{tier="hot"}`, `tiercache_tier_misses_total{tier="warm"}`,
		`tiercache_command_duration_seconds_bucket{command="get"`, `tiercache_command_duration_seconds_count{command="set"} 1`,
		"tiercache_flusher_queue_items", "tiercache_flusher_batches_total", "tiercache_flusher_drops_total",
		"tiercache_device_bytes_written_total", "tiercache_device_bytes_read_total",
		"tiercache_cold_stalled_io_total 0", "tiercache_cold_oldest_io_seconds ",
		"tiercache_flusher_errors_total 0", "tiercache_cold_errors_total 0", "tiercache_cold_writable 1", "tiercache_lost_total 0",
		"tiercache_warm_numa_node", "tiercache_warm_placement_ratio", "go_goroutines", "go_gc_",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestPprofEndpoint: /debug/pprof/ is served only when metrics.pprof is on.
func TestPprofEndpoint(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := testConfig(t, t.TempDir())
		cfg.Metrics.Pprof = on
		sc := startTestSidecar(t, cfg)
		resp, err := http.Get("http://" + sc.httpLn.Addr().String() + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusOK && strings.Contains(string(body), "goroutine profile"); got != on {
			t.Fatalf("pprof %v: status %d, body starts %.60q", on, resp.StatusCode, body)
		}
	}
}

// TestProcs: server.procs sets GOMAXPROCS, 0 leaves Go's default, and the
// start line says how many run.
func TestProcs(t *testing.T) {
	def := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(def) })
	for _, n := range []int{1, 0} {
		cfg := testConfig(t, t.TempDir())
		cfg.Server.Procs = n
		sc := startTestSidecar(t, cfg)
		want := n
		if n == 0 {
			want = def
		}
		if got := runtime.GOMAXPROCS(0); got != want {
			t.Fatalf("procs %d: GOMAXPROCS is %d, want %d", n, got, want)
		}
		if line := sc.describe(); !strings.Contains(line, fmt.Sprintf("; %d procs", want)) {
			t.Fatalf("procs %d: start line %q", n, line)
		}
		runtime.GOMAXPROCS(def)
	}
}

// TestConcurrentConnections: 2,000 clients connected at once, each with its
// own SET and GET, against the real sidecar.
func TestConcurrentConnections(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	cfg := testConfig(t, t.TempDir())
	startTestSidecar(t, cfg)
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("unix", cfg.Server.Socket)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		conns[i] = c
	}
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := fmt.Sprintf("conn:%04d", i)
			req := fmt.Sprintf("*3\r\n$3\r\nSET\r\n$9\r\n%s\r\n$9\r\n%s\r\n*2\r\n$3\r\nGET\r\n$9\r\n%s\r\n", k, k, k)
			want := "+OK\r\n$9\r\n" + k + "\r\n"
			if _, err := c.Write([]byte(req)); err != nil {
				failed.Add(1)
				return
			}
			got := make([]byte, len(want))
			if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d of %d concurrent connections failed", f, n)
	}
}

// TestDirectoryKeysBound: with cold.directory_keys set, the sidecar's
// directory forgets keys held only in cold (INFO tiers directory_forgotten,
// directory_keys at most the bound once it settled), DBSIZE still counts
// every key (tier T37), and go-redis still reads every key back, MGET
// included.
func TestDirectoryKeysBound(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Hot.Bytes, cfg.Warm.Bytes = 1<<20, 0 // most keys end up only in cold
	cfg.Cold.DirectoryKeys = 500             // above the ~250 keys the hot tier holds
	sc := startTestSidecar(t, cfg)
	ctx := context.Background()
	rc := newClient(t, sc, 2)
	val := func(i int) string { return strings.Repeat(fmt.Sprintf("%05d", i), 800) } // 4000 bytes
	const n = 2000
	for i := 0; i < n; i += 100 {
		pipe := rc.Pipeline()
		for j := i; j < i+100; j++ {
			pipe.Set(ctx, fmt.Sprintf("dk:%d", j), val(j), 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := rc.Info(ctx, "tiers").Result()
		if err != nil {
			t.Fatal(err)
		}
		dir := infoInt(t, info, "directory_keys")
		size, err := rc.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if dir <= cfg.Cold.DirectoryKeys && size == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("directory_keys still %d after 30 s, bound %d; DBSIZE %d of %d", dir, cfg.Cold.DirectoryKeys, size, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	info, err := rc.Info(ctx, "tiers").Result()
	if err != nil || !strings.Contains(info, "directory_forgotten:") || strings.Contains(info, "directory_forgotten:0\r\n") {
		t.Fatalf("INFO tiers shows no forgotten key: %v\n%s", err, info)
	}
	keys := make([]string, 0, 500)
	for i := 0; i < n; i++ {
		if i < 500 {
			keys = append(keys, fmt.Sprintf("dk:%d", i))
			continue
		}
		v, err := rc.Get(ctx, fmt.Sprintf("dk:%d", i)).Result()
		if err != nil || v != val(i) {
			t.Fatalf("GET dk:%d: %v, %d bytes", i, err, len(v))
		}
	}
	vals, err := rc.MGet(ctx, keys...).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if s, ok := v.(string); !ok || s != val(i) {
			t.Fatalf("MGET dk:%d: %T", i, v)
		}
	}
}

// TestGoRedisLongPipeline: go-redis writes a whole pipeline before it reads
// a reply. 20,000 SETs of 4000 bytes (80 MB of requests) and then 20,000
// GETs (80 MB of replies) go through one connection each way, where a
// server that blocks writing replies while the client blocks writing
// requests would deadlock (S12).
func TestGoRedisLongPipeline(t *testing.T) {
	sc := startTestSidecar(t, testConfig(t, t.TempDir()))
	ctx := context.Background()
	rc := newClient(t, sc, 2)
	const n = 20000
	val := func(i int) string { return strings.Repeat(fmt.Sprintf("%08d", i), 500) }
	pipe := rc.Pipeline()
	for i := 0; i < n; i++ {
		pipe.Set(ctx, fmt.Sprintf("lp:%d", i), val(i), 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("SET pipeline: %v", err)
	}
	pipe = rc.Pipeline()
	gets := make([]*redis.StringCmd, n)
	for i := range gets {
		gets[i] = pipe.Get(ctx, fmt.Sprintf("lp:%d", i))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("GET pipeline: %v", err)
	}
	hits := 0
	for i, g := range gets {
		switch v, err := g.Result(); {
		case err == nil && v == val(i):
			hits++
		case errors.Is(err, redis.Nil): // evicted past the tiers: a miss is allowed, a wrong value is not
		default:
			t.Fatalf("GET lp:%d: %v, %d bytes", i, err, len(v))
		}
	}
	if hits == 0 {
		t.Fatal("no GET of the pipeline hit")
	}
	t.Logf("%d of %d GETs hit", hits, n)
}

// infoInt is the integer field name of an INFO reply.
func infoInt(t *testing.T, info, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %v", name, err)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s field:\n%s", name, info)
	return 0
}
