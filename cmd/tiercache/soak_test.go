package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/tiercache/tiercache/tier"
)

// soakEnv sets TestSoak's load duration (a Go duration; default 2m, the CI
// run). scripts/soak runs it for 10m.
const soakEnv = "TIERCACHE_SOAK"

// soakPeerEnv=redis-server runs TestSoak's load on redis-server instead,
// for its figures (scripts/soak does both).
const soakPeerEnv = "TIERCACHE_SOAK_PEER"

// soakSample is one reading of the sidecar process during the soak.
type soakSample struct {
	at         time.Duration
	rss, fds   int64
	goroutines int64
}

// TestSoak runs the sidecar as its own process (hot 24 MiB, warm 40 MiB,
// no cold tier, as TestPeakRSSWithinBudget) under a Zipf mixed load of GET, SET, MGET, DEL and
// EXPIRE from 6 connections for TIERCACHE_SOAK (2m by default), and
// checks, every 5 s and at the end:
//   - peak RSS (VmHWM) ≤ 1.10 × (hot.bytes + warm.bytes) + DirEntryBytes ×
//     keys + 32 MiB (docs/DESIGN.md §6), keys being the most DBSIZE saw;
//   - the open file descriptors after the load are no more than after the
//     first sample (no fd growth);
//   - the goroutines (go_goroutines on /metrics) once the load's
//     connections are closed are no more than before they opened;
//   - every value read is the value of the key asked for.
//
// Without a cold tier because the emulated store's buffers and the
// flusher's queue are not charged to hot + warm (§6): with them (cold
// tier at its defaults) a 20 s run peaked at 160.9 MB against the bound's
// 109.1 MB. TestCloseLeavesNoGoroutine runs the same load with a cold tier.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the soak runs a mixed load for 2 minutes (TIERCACHE_SOAK)")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is in the sidecar's RSS (this binary is its own sidecar)")
	}
	dur := 2 * time.Minute
	if s := os.Getenv(soakEnv); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s=%q: %v", soakEnv, s, err)
		}
		dur = d
	}
	const hot, warm = 24 << 20, 40 << 20
	sock := shortSocket(t)
	metricsAddr := freeLoopbackAddr(t)
	peer := os.Getenv(soakPeerEnv) == "redis-server"
	var p *serveProc
	if peer {
		// The peer: the same load on redis-server with maxmemory at
		// hot + warm (allkeys-lru), no persistence. Only figures: the
		// bound and the goroutines are the sidecar's.
		p = startProc(t, exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
			"--maxmemory", fmt.Sprint(hot+warm), "--maxmemory-policy", "allkeys-lru"), sock)
	} else {
		p = startServe(t, sock, fmt.Sprintf("-metrics %s -log-level warn -cold none -hot-bytes %d -warm-bytes %d", metricsAddr, hot, warm),
			"GOMEMLIMIT=", "TIERCACHE_WARM_NODE=unbound")
	}
	pid := p.cmd.Process.Pid
	ctx := context.Background()
	probe := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	if err := probe.Ping(ctx).Err(); err != nil { // its connection stays open: counted from here on
		t.Fatal(err)
	}
	idleGoroutines, err := scrapeGauge(metricsAddr, "go_goroutines")
	if err != nil && !peer {
		t.Fatal(err)
	}

	load := newSoakLoad(sock, 6, 200_000)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range load.clients {
		wg.Add(1)
		go func() { defer wg.Done(); load.run(i, stop) }()
	}
	var samples []soakSample
	var maxKeys int64
	start := time.Now()
	sample := func() {
		s := soakSample{at: time.Since(start)}
		s.fds, _ = countFDs(pid)
		s.rss, _ = procStatus(pid, "VmRSS:")
		s.goroutines, _ = scrapeGauge(metricsAddr, "go_goroutines")
		if n, err := probe.DBSize(ctx).Result(); err == nil && n > maxKeys {
			maxKeys = n
		}
		samples = append(samples, s)
	}
	for deadline := start.Add(dur); time.Now().Before(deadline) && !load.failed(); {
		time.Sleep(min(5*time.Second, time.Until(deadline)))
		sample()
	}
	close(stop)
	wg.Wait()
	sample()
	// The last scrape's connection is closed on the sidecar's side after its
	// reply went out: a count taken right after it may still see it. A leak
	// stays; that socket goes within moments.
	for end := time.Now().Add(2 * time.Second); !peer && samples[len(samples)-1].fds > samples[0].fds && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		samples[len(samples)-1].fds, _ = countFDs(pid)
	}
	if err := load.err(); err != nil {
		t.Fatal(err)
	}
	load.close()
	// The server closes a connection's goroutines once it sees EOF.
	var after int64
	for deadline := time.Now().Add(10 * time.Second); !peer; time.Sleep(100 * time.Millisecond) {
		if after, err = scrapeGauge(metricsAddr, "go_goroutines"); err != nil {
			t.Fatal(err)
		}
		if after <= idleGoroutines || time.Now().After(deadline) {
			break
		}
	}
	peak, err := procStatus(pid, "VmHWM:")
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()

	bound := int64(hot+warm)*110/100 + maxKeys*tier.DirEntryBytes + 32<<20
	first, last := samples[0], samples[len(samples)-1]
	var rssMin, rssMax int64 = 1 << 62, 0
	for _, s := range samples {
		rssMin, rssMax = min(rssMin, s.rss), max(rssMax, s.rss)
	}
	t.Logf("soak %v: %d ops (%d GET, %d SET, %d MGET, %d DEL, %d EXPIRE; %d errors answered), %d keys at most",
		dur, load.ops.Load(), load.byOp[0].Load(), load.byOp[1].Load(), load.byOp[2].Load(), load.byOp[3].Load(),
		load.byOp[4].Load(), load.replyErrs.Load(), maxKeys)
	t.Logf("RSS %.1f..%.1f MB sampled, peak (VmHWM) %.1f MB, bound %.1f MB; fds %d at %v, %d at the end; goroutines %d idle, %d under load, %d after",
		float64(rssMin)/1e6, float64(rssMax)/1e6, float64(peak)/1e6, float64(bound)/1e6,
		first.fds, first.at.Round(time.Second), last.fds, idleGoroutines, first.goroutines, after)
	if peer {
		t.Logf("peer %s: the sidecar's bound and goroutines do not apply", p.cmd.Path)
		return
	}
	if peak > bound {
		t.Errorf("peak RSS %d bytes is above the bound %d", peak, bound)
	}
	if last.fds > first.fds {
		t.Errorf("open fds grew from %d to %d", first.fds, last.fds)
	}
	if after > idleGoroutines {
		t.Errorf("goroutines: %d after the load's connections closed, %d before they opened", after, idleGoroutines)
	}
	if load.replyErrs.Load() > 0 {
		t.Errorf("%d commands answered an error; the first: %v", load.replyErrs.Load(), load.firstReplyErr.Load())
	}
}

// soakLoad is TestSoak's clients: each one connection, each its own
// Zipf-distributed key choice over the same key space.
type soakLoad struct {
	clients       []*redis.Client
	keys          int
	ops           atomic.Int64
	byOp          [5]atomic.Int64 // GET, SET, MGET, DEL, EXPIRE
	replyErrs     atomic.Int64
	firstReplyErr atomic.Value
	fatal         atomic.Value
}

func newSoakLoad(sock string, conns, keys int) *soakLoad {
	l := &soakLoad{keys: keys}
	for range conns {
		l.clients = append(l.clients, redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1,
			MinIdleConns: 1, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxRetries: -1}))
	}
	return l
}

func soakKey(i int) string { return fmt.Sprintf("soak:%07d", i) }

// soakValue is key i's value: its key, then filler, 16 B to 16 KiB
// (larger values are rarer).
func soakValue(r *rand.Rand, i int) string {
	n := 16 << r.IntN(11)
	n += r.IntN(n)
	k := soakKey(i) + ":"
	return k + strings.Repeat("v", max(n-len(k), 0))
}

func (l *soakLoad) run(c int, stop <-chan struct{}) {
	rc := l.clients[c]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(c), 7))
	z := rand.NewZipf(r, 1.1, 1, uint64(l.keys-1))
	check := func(i int, v string) {
		if !strings.HasPrefix(v, soakKey(i)+":") {
			l.fatal.CompareAndSwap(nil, fmt.Errorf("GET %s read %.40q, another key's value", soakKey(i), v))
		}
	}
	for {
		select {
		case <-stop:
			return
		default:
		}
		i := int(z.Uint64())
		op := r.IntN(100)
		var err error
		switch {
		case op < 45:
			op = 0
			var v string
			if v, err = rc.Get(ctx, soakKey(i)).Result(); err == nil {
				check(i, v)
			}
		case op < 75:
			op = 1
			err = rc.Set(ctx, soakKey(i), soakValue(r, i), 0).Err()
		case op < 85:
			op = 2
			ks := make([]string, 8)
			ids := make([]int, 8)
			for j := range ks {
				ids[j] = int(z.Uint64())
				ks[j] = soakKey(ids[j])
			}
			var vs []any
			if vs, err = rc.MGet(ctx, ks...).Result(); err == nil {
				for j, v := range vs {
					if s, ok := v.(string); ok {
						check(ids[j], s)
					}
				}
			}
		case op < 93:
			op = 3
			err = rc.Del(ctx, soakKey(i)).Err()
		default:
			op = 4
			err = rc.Expire(ctx, soakKey(i), time.Duration(1+r.IntN(10))*time.Second).Err()
		}
		l.ops.Add(1)
		l.byOp[op].Add(1)
		if err != nil && !errors.Is(err, redis.Nil) {
			var re redis.Error
			if !errors.As(err, &re) {
				l.fatal.CompareAndSwap(nil, fmt.Errorf("connection %d: %w", c, err))
				return
			}
			if l.replyErrs.Add(1) == 1 {
				l.firstReplyErr.Store(err)
			}
		}
		if l.failed() {
			return
		}
	}
}

func (l *soakLoad) failed() bool { return l.fatal.Load() != nil }

func (l *soakLoad) err() error {
	if e, ok := l.fatal.Load().(error); ok {
		return e
	}
	return nil
}

func (l *soakLoad) close() {
	for _, rc := range l.clients {
		rc.Close()
	}
}

// freeLoopbackAddr returns a 127.0.0.1 port free a moment ago.
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrapeGauge reads one unlabelled metric from a /metrics endpoint, on a
// connection of its own that is closed afterwards.
func scrapeGauge(addr, name string) (int64, error) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(rest, 64)
			return int64(f), err
		}
	}
	io.Copy(io.Discard, resp.Body)
	return 0, fmt.Errorf("no %s on %s/metrics", name, addr)
}

// countFDs counts a process's open file descriptors.
func countFDs(pid int) (int64, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return int64(len(ents)), err
}

// procStatus reads a kB field of /proc/<pid>/status ("VmRSS:", "VmHWM:")
// in bytes.
func procStatus(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// TestCloseLeavesNoGoroutine: an in-process sidecar (hot 4 MiB, warm 4
// MiB, emulated cold) under the soak's mixed load from 6 connections for
// 3 s, and on until an eviction reached cold (60 s at most): no copy on its way to cold was
// dropped and no key lost while the store had room (backpressure, tier
// T25), and once the clients and the sidecar are closed, no goroutine the
// sidecar started is left (goleak).
func TestCloseLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := testConfig(t, t.TempDir())
	cfg.Hot.Bytes, cfg.Warm.Bytes = 4<<20, 4<<20
	sc, err := startSidecar(cfg, nopLogger())
	if err != nil {
		t.Fatal(err)
	}
	load := newSoakLoad(cfg.Server.Socket, 6, 20_000)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range load.clients {
		wg.Add(1)
		go func() { defer wg.Done(); load.run(i, stop) }()
	}
	// At least 3 s, and on until an eviction reached cold (a slow run,
	// under -race on a loaded machine, fills DRAM later), at most 60 s.
	time.Sleep(3 * time.Second)
	for end := time.Now().Add(57 * time.Second); sc.cache.Stats().Flushed == 0 && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	load.close()
	if err := load.err(); err != nil {
		t.Error(err)
	}
	if load.ops.Load() == 0 {
		t.Error("the load made no request")
	}
	st := sc.cache.Stats()
	for _, l := range st.Tiers {
		if l.Name == "cold" && l.Evictions == 0 && (st.Flusher.Drops != 0 || st.Lost != 0) {
			t.Errorf("flusher drops %d, lost %d while the cold store had room (it reclaimed nothing): want none", st.Flusher.Drops, st.Lost)
		}
	}
	if st.Flushed == 0 {
		t.Error("no DRAM eviction was written to cold: the load did not exercise the flusher")
	}
	t.Logf("flushed %d, flusher %+v, lost %d", st.Flushed, st.Flusher, st.Lost)
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
}
