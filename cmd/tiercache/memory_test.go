package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"

	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tiercache/tiercache/tier"
)

// serveEnv makes the test binary run the sidecar instead of the tests
// (TestMain): a memory bound is measured on a process of its own.
const serveEnv = "TIERCACHE_TEST_SERVE"

func TestMain(m *testing.M) {
	if args := os.Getenv(serveEnv); args != "" {
		if os.Getenv(noURingEnv) == "1" {
			if err := refuseIOUringSetup(); err != nil {
				fmt.Println("SECCOMP-FAILED:", err)
				os.Exit(2)
			}
		}
		os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestPeakRSSWithinBudget: under a churning load (every key written, then
// Zipf-chosen overwrites and reads, more data than DRAM holds), the
// sidecar's peak RSS stays within 1.10 × (hot.bytes + warm.bytes) + the
// directory's documented cost per key × keys + 32 MiB, with no GOMEMLIMIT
// from the user: the sidecar sets its own Go memory limit. Without a cold
// tier, so that only the DRAM tiers are measured.
func TestPeakRSSWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the churn writes about 400 MB through the sidecar")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is in the sidecar's RSS (this binary is its own sidecar)")
	}
	p, rc := startBudgetSidecar(t)
	ctx := context.Background()
	const keys, size = 100_000, 1536
	val := func(i, gen int) []byte {
		v := make([]byte, size)
		binary.LittleEndian.PutUint64(v, uint64(i))
		binary.LittleEndian.PutUint64(v[8:], uint64(gen))
		return v
	}
	key := func(i int) string { return fmt.Sprintf("vec:%08d", i) }
	pipeSet := func(idx []int, gen int) {
		p := rc.Pipeline()
		for _, i := range idx {
			p.Set(ctx, key(i), val(i, gen), 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	batch := make([]int, 0, 256)
	for i := 0; i < keys; i++ {
		if batch = append(batch, i); len(batch) == cap(batch) {
			pipeSet(batch, 0)
			batch = batch[:0]
		}
	}
	pipeSet(batch, 0)
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, keys-1)
	hits, reads := 0, 0
	for round := 1; round <= 150; round++ {
		batch = batch[:0]
		for j := 0; j < 256; j++ {
			batch = append(batch, int(z.Uint64()))
		}
		pipeSet(batch[:64], round) // overwrites
		ks := make([]string, 0, 192)
		for _, i := range batch[64:] {
			ks = append(ks, key(i))
		}
		vs, err := rc.MGet(ctx, ks...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for n, v := range vs {
			reads++
			if s, ok := v.(string); ok {
				if len(s) != size || binary.LittleEndian.Uint64([]byte(s)) != uint64(batch[64+n]) {
					t.Fatalf("GET %s read another key's value", ks[n])
				}
				hits++
			}
		}
	}
	checkPeakRSS(t, p, rc, fmt.Sprintf("hit ratio %.2f", float64(hits)/float64(reads)))
}

// budgetHot and budgetWarm are the DRAM tiers of the peak RSS tests.
const budgetHot, budgetWarm = 24 << 20, 40 << 20

// startBudgetSidecar starts the sidecar of a peak RSS test as a process of
// its own: no cold tier (only the DRAM tiers are measured), no GOMEMLIMIT
// from the user, and a client of it.
func startBudgetSidecar(t *testing.T) (*serveProc, *redis.Client) {
	t.Helper()
	sock := shortSocket(t)
	p := startServe(t, sock, fmt.Sprintf("-metrics 127.0.0.1:0 -log-level warn -cold none -hot-bytes %d -warm-bytes %d", budgetHot, budgetWarm),
		"GOMEMLIMIT=", "TIERCACHE_WARM_NODE=unbound")
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 4})
	t.Cleanup(func() { rc.Close() })
	return p, rc
}

// checkPeakRSS fails t when p's peak RSS is above 1.10 × (hot + warm) +
// the directory's cost per key × the keys it holds + 32 MiB.
func checkPeakRSS(t *testing.T, p *serveProc, rc *redis.Client, note string) {
	t.Helper()
	n, err := rc.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	peak, err := procStatus(p.cmd.Process.Pid, "VmHWM:")
	if err != nil {
		t.Fatal(err)
	}
	bound := (budgetHot+budgetWarm)*110/100 + n*tier.DirEntryBytes + 32<<20
	t.Logf("peak RSS %.1f MB, bound %.1f MB (hot %d MiB + warm %d MiB, %d keys held, %s)",
		float64(peak)/1e6, float64(bound)/1e6, budgetHot>>20, budgetWarm>>20, n, note)
	if peak > bound {
		t.Fatalf("peak RSS %d bytes is above the bound %d", peak, bound)
	}
}

// TestMemLimiterFollowsBudget: with server.go_memory_limit auto the Go
// memory limit is the cache's heap budget and the runtime's overhead while the sidecar runs, follows
// it as keys are added, and is put back as it was after Close; a fixed
// size is set as given; off leaves the limit alone.
func TestMemLimiterFollowsBudget(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set in the environment: auto leaves it alone")
	}
	before := debug.SetMemoryLimit(-1)
	cfg := testConfig(t, t.TempDir())
	cfg.Cold.Backend = "none"
	cfg.Server.GoMemoryLimit = "auto"
	sc := startTestSidecar(t, cfg)
	// The limit set last: the budget or the live heap's floor, whichever
	// is more, and the overhead, both read when it was set.
	expected := func() (want, overhead int64) {
		procMemLimit.mu.Lock()
		defer procMemLimit.mu.Unlock()
		return max(sc.cache.Memory().GoLimit(), procMemLimit.floor) + procMemLimit.overhead, procMemLimit.overhead
	}
	if got, want, overhead := debug.SetMemoryLimit(-1), sc.cache.Memory().GoLimit(), procMemLimit.overhead; got < want+overhead || overhead <= 0 {
		t.Fatalf("limit %d, want at least the heap budget, live structures and the runtime's overhead %d (overhead %d)", got, want+overhead, overhead)
	}
	for i := 0; i < 20000; i++ {
		if _, err := sc.cache.Set([]byte(fmt.Sprint("k", i)), []byte("v"), tier.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := expected()
	for deadline := time.Now().Add(5 * memLimitEvery); debug.SetMemoryLimit(-1) != want; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d did not follow the budget and overhead %d", debug.SetMemoryLimit(-1), want)
		}
		want, _ = expected()
	}
	sc.Close()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("limit after Close %d, want %d as before", got, before)
	}

	cfg = testConfig(t, t.TempDir())
	cfg.Cold.Backend = "none"
	cfg.Server.GoMemoryLimit = "300MiB"
	sc = startTestSidecar(t, cfg)
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Fatalf("limit %d, want 300MiB", got)
	}
	sc.Close()
	cfg = testConfig(t, t.TempDir())
	cfg.Cold.Backend = "none"
	sc = startTestSidecar(t, cfg) // off
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("limit %d with go_memory_limit off, want %d", got, before)
	}
	sc.Close()
}

// TestMemLimitLeavesLiveHeapRoom checks C7's floor: heap the budget does
// not count (here a 64 MiB object kept live) raises the auto limit to the
// live heap and a quarter more, so the collector keeps room to work in.
func TestMemLimitLeavesLiveHeapRoom(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set in the environment: auto leaves it alone")
	}
	cfg := testConfig(t, t.TempDir())
	cfg.Cold.Backend = "none"
	cfg.Server.GoMemoryLimit = "auto"
	sc := startTestSidecar(t, cfg)
	defer sc.Close()
	ballast := make([]byte, 64<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	runtime.GC()
	floor := func() int64 {
		procMemLimit.mu.Lock()
		defer procMemLimit.mu.Unlock()
		return procMemLimit.floor
	}
	for deadline := time.Now().Add(5 * time.Second); floor() < int64(len(ballast))*5/4; time.Sleep(memLimitEvery) {
		if time.Now().After(deadline) {
			t.Fatalf("floor %d after 5 s, want at least %d: 64 MiB live and a quarter", floor(), len(ballast)*5/4)
		}
	}
	if got := debug.SetMemoryLimit(-1); got < floor() {
		t.Fatalf("limit %d under the live heap's floor %d", got, floor())
	}
	runtime.KeepAlive(ballast)
}

// TestMemLimiterRefreshAfterRemove: a follower's refresh that comes after
// the last cache's remove (its tick raced the remove) leaves the limit
// remove put back, where it set the sum of no shares, 0.
func TestMemLimiterRefreshAfterRemove(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	l := &memLimiter{caches: map[*tier.Cache]memLimit{}}
	stop := make(chan struct{}) // a follower's, which remove took off l.stop before closing it
	debug.SetMemoryLimit(300 << 20)
	if l.refresh(stop) {
		t.Fatal("a stopped follower refreshed")
	}
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Fatalf("limit %d after a stopped follower's refresh, want %d", got, 300<<20)
	}
}
