package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/remote/redistest"
)

// sharedConfig is testConfig with the remote tier at addrs under prefix.
func sharedConfig(t testing.TB, addrs []string, prefix string) *Config {
	cfg := testConfig(t, t.TempDir())
	cfg.Remote.Addrs = addrs
	cfg.Remote.Prefix = prefix
	cfg.Remote.Timeout = Duration(100 * time.Millisecond)
	return cfg
}

// sidecarClient is a go-redis client on sc's socket.
func sidecarClient(t testing.TB, sc *sidecar, cfg *Config) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: cfg.Server.Socket, MaxRetries: -1,
		ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// infoField reads one field of INFO section.
func infoField(t testing.TB, c *redis.Client, section, field string) string {
	t.Helper()
	s, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

// waitWritten waits until c's remote queue is empty.
func waitWritten(t testing.TB, c *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for infoField(t, c, "tiers", "remote_queue_items") != "0" || infoField(t, c, "tiers", "remote_queue_in_flight") != "0" {
		if time.Now().After(deadline) {
			t.Fatal("the remote queue did not drain")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSharedSidecars runs whole sidecars (RESP over their sockets) on one
// real 3+3 Redis Cluster.
func TestSharedSidecars(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	t.Run("KeysCrossSidecars", func(t *testing.T) { testSharedKeys(t, cl) })
	t.Run("MasterKilledUnderLoad", func(t *testing.T) { testSharedFailover(t, cl) })
	t.Run("ClusterDownAndBack", func(t *testing.T) { testSharedClusterDown(t, cl) })
}

// testSharedKeys: 2,000 keys written through sidecar A are read through
// B (the 0 of 2,000); a chunked value reads whole; an overwrite
// and a DEL through B are seen through A within a second; INFO and TIER
// report the remote tier.
func testSharedKeys(t *testing.T, cl *redistest.Cluster) {
	ctx := context.Background()
	ca, cb := sharedConfig(t, cl.Addrs()[:1], "s1:"), sharedConfig(t, cl.Addrs()[:1], "s1:")
	// What is shared, not how fast: a read past remote.timeout is a miss by
	// design, which a loaded machine would turn into a failure here.
	ca.Remote.Timeout, cb.Remote.Timeout = Duration(5*time.Second), Duration(5*time.Second)
	a, b := sidecarClient(t, startTestSidecar(t, ca), ca), sidecarClient(t, startTestSidecar(t, cb), cb)
	for i := 0; i < 2000; i++ {
		if err := a.Set(ctx, fmt.Sprint("emb:", i), fmt.Sprintf("vector-%d-%s", i, strings.Repeat("x", 1500)), time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	big := bytes.Repeat([]byte("kv-cache-chunk "), 200_000) // 3 MB: pieces of 1 MiB
	if err := a.Set(ctx, "kv:chunk", big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitWritten(t, a)
	if w, err := b.Do(ctx, "TIER", "emb:7").Text(); err != nil || w != "remote" {
		t.Fatalf("TIER emb:7 through b: %q %v", w, err)
	}
	found := 0
	for i := 0; i < 2000; i += 100 { // MGET through the remote, 100 keys at a time
		keys := make([]string, 100)
		for j := range keys {
			keys[j] = fmt.Sprint("emb:", i+j)
		}
		vals, err := b.MGet(ctx, keys...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range vals {
			if s, ok := v.(string); ok && strings.HasPrefix(s, fmt.Sprintf("vector-%d-", i+j)) {
				found++
				continue
			}
			// Missed: a remote read past its deadline (or the breaker open
			// after a few) is a miss by design; the key must be there for
			// the next read.
			if s, err := b.Get(ctx, keys[j]).Result(); err == nil && strings.HasPrefix(s, fmt.Sprintf("vector-%d-", i+j)) {
				found++
			}
		}
	}
	if found != 2000 {
		t.Fatalf("%d of 2,000 keys written through a read through b", found)
	}
	if got, err := b.Get(ctx, "kv:chunk").Bytes(); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("the chunked value through b: %d bytes, %v", len(got), err)
	}
	if ttl, err := b.TTL(ctx, "emb:3").Result(); err != nil || ttl < 59*time.Minute {
		t.Fatalf("TTL through b of a key written with an hour: %v %v", ttl, err)
	}
	a.Get(ctx, "emb:5") // a holds it locally (it wrote it)
	if err := b.Set(ctx, "emb:5", "recomputed", 0).Err(); err != nil {
		t.Fatal(err)
	}
	b.Del(ctx, "emb:6")
	waitWritten(t, b)
	deadline := time.Now().Add(time.Second)
	for {
		v5, _ := a.Get(ctx, "emb:5").Result()
		_, err6 := a.Get(ctx, "emb:6").Result()
		if v5 == "recomputed" && err6 == redis.Nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a reads emb:5 %q and emb:6 %v a second after b changed them", v5, err6)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if h := infoField(t, b, "tiers", "tier_remote_hits"); h == "" || h == "0" {
		t.Fatalf("INFO tiers tier_remote_hits %q", h)
	}
	for _, f := range []string{"remote_backend", "remote_connected", "remote_breaker", "remote_written"} {
		if infoField(t, a, "tiers", f) == "" {
			t.Errorf("INFO tiers has no %s", f)
		}
	}
}

// latencies collects request durations.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := slices.Clone(l.d)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// loadSidecar runs clients on c until stop: GETs of 200 keys it wrote
// (local hits), SETs of new keys, and GETs of keys only the remote may
// hold; it records every error and the local hits' latencies.
func loadSidecar(c *redis.Client, stop <-chan struct{}, errs *atomic.Int64, firstErr *atomic.Value, local *latencies, worst *atomic.Int64) *sync.WaitGroup {
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				var err error
				switch i % 3 {
				case 0:
					err = c.Get(ctx, fmt.Sprint("hot:", (g*50+i)%200)).Err()
					if err == nil {
						local.add(time.Since(start))
					}
				case 1:
					err = c.Set(ctx, fmt.Sprint("new:", g, ":", i), "v", time.Minute).Err()
				default:
					err = c.Get(ctx, fmt.Sprint("nowhere:", g, ":", i)).Err()
					if err == redis.Nil {
						err = nil
					}
				}
				if d := int64(time.Since(start)); d > worst.Load() {
					worst.Store(d)
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	return &wg
}

// testSharedFailover: a master of the remote cluster is SIGKILLed while
// clients load a sidecar; its replica takes over; no client request
// fails, local hits stay fast, and once the cluster is ok again the
// sidecar's writes reach the remote and another sidecar reads them.
func testSharedFailover(t *testing.T, cl *redistest.Cluster) {
	ctx := context.Background()
	ca, cb := sharedConfig(t, cl.Addrs()[:1], "s2:"), sharedConfig(t, cl.Addrs()[:1], "s2:")
	a, b := sidecarClient(t, startTestSidecar(t, ca), ca), sidecarClient(t, startTestSidecar(t, cb), cb)
	for i := 0; i < 200; i++ {
		a.Set(ctx, fmt.Sprint("hot:", i), "local", 0)
	}
	var errs atomic.Int64
	var firstErr atomic.Value
	var local latencies
	var worst atomic.Int64
	stop := make(chan struct{})
	wg := loadSidecar(a, stop, &errs, &firstErr, &local, &worst)
	time.Sleep(time.Second)
	victim := cl.MasterOf(int(slotOf("s2:d1:failover")))
	victim.Kill()
	t.Logf("killed master %s", victim.Addr)
	cl.WaitOK(30 * time.Second)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	if n := errs.Load(); n != 0 {
		t.Fatalf("%d client requests failed during the failover; the first: %v", n, firstErr.Load())
	}
	p99, max := local.quantile(0.99), time.Duration(worst.Load())
	t.Logf("local hits: %d, p50 %v, p99 %v; the slowest request %v", len(local.d), local.quantile(0.5), p99, max)
	if p99 > 100*time.Millisecond {
		t.Errorf("local hits' p99 %v during the failover, want under 100ms (they do not touch the remote)", p99)
	}
	// Written after the failover, through a; read through b.
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		k := fmt.Sprint("after:", i)
		a.Set(ctx, k, "v", 0)
		time.Sleep(50 * time.Millisecond)
		if v, err := b.Get(ctx, k).Result(); err == nil && v == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the failover, b never read a write of a: a's INFO remote_breaker %s, remote_write_errors %s",
				infoField(t, a, "tiers", "remote_breaker"), infoField(t, a, "tiers", "remote_write_errors"))
		}
	}
	victim.Restart() // rejoins as a replica
	cl.WaitOK(30 * time.Second)
}

// slotOf is the cluster slot of key.
func slotOf(key string) uint16 {
	return remoteKeySlot([]byte(key))
}

// testSharedClusterDown: every node of the cluster is killed; the sidecar
// keeps serving its local tiers with no error and no stall past the
// deadline; the cluster restarts and the remote tier comes back by itself.
func testSharedClusterDown(t *testing.T, cl *redistest.Cluster) {
	ctx := context.Background()
	ca, cb := sharedConfig(t, cl.Addrs()[:1], "s3:"), sharedConfig(t, cl.Addrs()[:1], "s3:")
	a, b := sidecarClient(t, startTestSidecar(t, ca), ca), sidecarClient(t, startTestSidecar(t, cb), cb)
	cl.KillAll()
	for i := 0; i < 200; i++ {
		start := time.Now()
		if err := a.Set(ctx, fmt.Sprint("k", i), "while down", 0).Err(); err != nil {
			t.Fatalf("SET while the cluster is down: %v", err)
		}
		if v, err := a.Get(ctx, fmt.Sprint("k", i)).Result(); err != nil || v != "while down" {
			t.Fatalf("GET while the cluster is down: %q %v", v, err)
		}
		if err := a.Get(ctx, fmt.Sprint("absent", i)).Err(); err != redis.Nil {
			t.Fatalf("GET of an absent key while down: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("three requests took %v while the cluster was down", d)
		}
	}
	if s := infoField(t, a, "tiers", "remote_breaker"); s == "closed" {
		t.Errorf("the breaker is %s with every node down", s)
	}
	cl.RestartAll()
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		k := fmt.Sprint("back:", i)
		a.Set(ctx, k, "v", 0)
		time.Sleep(100 * time.Millisecond)
		if v, err := b.Get(ctx, k).Result(); err == nil && v == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the remote tier did not come back: a's breaker %s, connected %s",
				infoField(t, a, "tiers", "remote_breaker"), infoField(t, a, "tiers", "remote_connected"))
		}
	}
}

// TestSharedBadRemote: unreachable seeds at start (the sidecar starts,
// serves locally and says so), a wrong password (the same), and a remote
// that never answers (a request waits at most about the deadline).
func TestSharedBadRemote(t *testing.T) {
	ctx := context.Background()
	core, logs := observer.New(zapcore.InfoLevel)
	dead := freeAddr(t)
	cfg := sharedConfig(t, []string{dead}, "b1:")
	sc, err := startSidecar(cfg, zap.New(core))
	if err != nil {
		t.Fatalf("start with unreachable seeds: %v", err)
	}
	t.Cleanup(func() { sc.Close() })
	c := sidecarClient(t, sc, cfg)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("local serving with the remote unreachable: %q %v", v, err)
	}
	if got := infoField(t, c, "tiers", "remote_connected"); got != "0" {
		t.Errorf("remote_connected %q with unreachable seeds", got)
	}
	if logs.FilterMessageSnippet("remote tier unavailable at start: no seed answered").Len() == 0 {
		t.Error("the log does not say the remote tier is unreachable")
	}

	srv := redistest.StartServer(t, "--requirepass", "right")
	wrong := sharedConfig(t, []string{srv.Addr}, "b2:")
	wrong.Remote.Password = "wrong"
	cw := sidecarClient(t, startTestSidecar(t, wrong), wrong)
	if err := cw.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := infoField(t, cw, "tiers", "remote_connected"); got != "0" {
		t.Errorf("remote_connected %q with a wrong password", got)
	}

	slow := sharedConfig(t, []string{redistest.Silent(t)}, "b3:")
	cs := sidecarClient(t, startTestSidecar(t, slow), slow)
	start := time.Now()
	if err := cs.Get(ctx, "absent").Err(); err != redis.Nil {
		t.Fatalf("GET against a silent remote: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("GET against a silent remote took %v", d)
	}
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

// remoteKeySlot is the cluster slot of a key.
var remoteKeySlot = remote.KeySlot
