package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tiercache/tiercache/remote/redistest"
)

// The watch tests (TestDashboardThroughPrometheus, TestStatusPageInChromium)
// run a built sidecar under a load of every command family, with
// tenants and an emulated cold store under a small DRAM budget, and
// look at it through real Prometheus and Chromium. scripts/test.d/40-watch
// installs those and runs them with TIERCACHE_WATCH=1.

// watchEnv is set by scripts/test.d/40-watch.
const watchEnv = "TIERCACHE_WATCH"

// watchExtraYAMLEnv names a file of YAML appended to the watch sidecar's
// configuration: top-level sections the tests do not set, e.g. the remote
// tier's, so the panels that need one are checked (remotePanels).
const watchExtraYAMLEnv = "TIERCACHE_WATCH_EXTRA_YAML"

// requireWatchTool returns the path of a tool the watch suite installs:
// outside the suite the test skips; in it a missing tool skips with the
// reason, or fails under TIERCACHE_NO_SKIP.
func requireWatchTool(t *testing.T, tool string) string {
	t.Helper()
	if os.Getenv(watchEnv) != "1" {
		t.Skipf("run by scripts/test.d/40-watch (%s=1), which installs %s", watchEnv, tool)
	}
	p, err := exec.LookPath(tool)
	if err != nil {
		skipOrFail(t, "%s not found (apt-get install %s, as scripts/test.d/40-watch does as root): %v", tool, tool, err)
	}
	return p
}

// watchConfig is the watch sidecar's configuration: 32 MiB of DRAM for a
// load of about 70 MB, a 64 MiB emulated cold store (so its oldest
// regions are reclaimed), two tenants. The Go memory limit is off: at
// this small a budget the automatic one sits below the live heap of the
// load's connections.
const watchConfig = `hot:
  bytes: 16MiB
warm:
  bytes: 16MiB
cold:
  capacity: 64MiB
server:
  go_memory_limit: "off"
tenants:
  - {name: rag, prefix: "rag:", quota: 8MiB}
  - {name: emb, prefix: "emb:", quota: 8MiB}
`

// watchSidecar is the sidecar the watch tests look at.
type watchSidecar struct {
	proc        *serveProc
	sock        string
	metricsAddr string // host:port of /metrics, the status page
	rc          *redis.Client
}

// startWatchSidecar runs the sidecar as a process of its own (the test
// binary, TestMain) with watchConfig and metrics on an ephemeral port,
// and with a remote tier on a redis-server of its own (so the remote
// tier's panels and rows have data).
func startWatchSidecar(t *testing.T) *watchSidecar {
	t.Helper()
	dir := t.TempDir()
	conf := watchConfig + "remote:\n  addrs: [\"" + redistest.StartServer(t).Addr + "\"]\n  prefix: \"watch:\"\n"
	if p := os.Getenv(watchExtraYAMLEnv); p != "" {
		extra, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", watchExtraYAMLEnv, err)
		}
		conf += string(extra)
	}
	cfgFile := filepath.Join(dir, "tiercache.yaml")
	if err := os.WriteFile(cfgFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := shortSocket(t)
	p := startServe(t, sock, "-config "+cfgFile+" -data "+filepath.Join(dir, "data")+" -metrics 127.0.0.1:0 -log-level warn")
	m := regexp.MustCompile(`metrics http://([0-9.:]+)/metrics`).FindStringSubmatch(p.output())
	if m == nil {
		t.Fatalf("no metrics address in the sidecar's start line:\n%s", p.output())
	}
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, MaxRetries: -1})
	t.Cleanup(func() { rc.Close() })
	return &watchSidecar{proc: p, sock: sock, metricsAddr: m[1], rc: rc}
}

// watchLoad is a load on the sidecar that exercises every command family
// and tenant: 4 connections, values of 512 B to 4 KiB over 30,000 keys
// read with a skew, until stopped or 2,000,000 commands.
type watchLoad struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ops    atomic.Int64
	mu     sync.Mutex
	err    error
}

// startWatchLoad starts the load; stop ends it and reports its first
// unexpected error.
func startWatchLoad(sock string) *watchLoad {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	l := &watchLoad{cancel: cancel}
	for w := range 4 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			rc := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, MaxRetries: -1,
				ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
			defer rc.Close()
			if err := watchWorker(ctx, rc, uint64(w), &l.ops); err != nil && ctx.Err() == nil {
				l.mu.Lock()
				l.err = errors.Join(l.err, err)
				l.mu.Unlock()
			}
		}()
	}
	return l
}

func (l *watchLoad) stop() (int64, error) {
	l.cancel()
	l.wg.Wait()
	return l.ops.Load(), l.err
}

const watchMaxOps = 2_000_000

// watchWorker is one connection of the load.
func watchWorker(ctx context.Context, rc *redis.Client, seed uint64, ops *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(seed, 0x7ea7c4c3))
	prefixes := []string{"rag:", "emb:", "user:"} // two tenants and the default
	val := []byte(strings.Repeat("0123456789abcdef", 4096/16))
	key := func() string { // skewed: a few keys read often
		u := rng.Float64()
		return prefixes[rng.IntN(len(prefixes))] + strconv.Itoa(int(30000*u*u*u))
	}
	for i := 0; ctx.Err() == nil && ops.Load() < watchMaxOps; i++ {
		var err error
		k := key()
		switch i % 16 {
		case 0, 1, 2, 3:
			err = rc.Set(ctx, k, val[:512+rng.IntN(3584)], 0).Err()
		case 4, 5, 6, 7, 8:
			err = rc.Get(ctx, k).Err()
		case 9:
			err = rc.MGet(ctx, k, key(), key()).Err()
		case 10:
			h := "h" + k
			if err = rc.HSet(ctx, h, "f"+strconv.Itoa(i%8), val[:64]).Err(); err == nil {
				err = rc.HGetAll(ctx, h).Err()
			}
		case 11:
			l := "l" + k
			if err = rc.LPush(ctx, l, val[:32]).Err(); err == nil {
				err = rc.LTrim(ctx, l, 0, 15).Err()
			}
			if err == nil {
				err = rc.LRange(ctx, l, 0, 4).Err()
			}
			if err == nil && i%64 == 11 {
				err = rc.BLPop(ctx, time.Second, l).Err() // the list has elements: no wait
			}
		case 12:
			if err = rc.Expire(ctx, k, time.Hour).Err(); err == nil {
				err = rc.TTL(ctx, k).Err()
			}
			if err == nil {
				err = rc.Exists(ctx, key()).Err()
			}
		case 13:
			_, err = rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Incr(ctx, "user:counter")
				p.Get(ctx, k)
				return nil
			})
		case 14:
			if i%256 == 14 {
				err = rc.Del(ctx, key()).Err()
			} else {
				err = rc.Ping(ctx).Err()
			}
		case 15:
			if i%128 == 15 {
				err = rc.Info(ctx, "stats").Err()
			} else {
				err = rc.Get(ctx, k).Err()
			}
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("load: %w", err)
		}
		ops.Add(1)
	}
	return nil
}

// freePort returns a loopback port free at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
