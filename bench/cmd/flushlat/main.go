// Command flushlat measures how long other clients' GETs wait while a
// FLUSHALL runs, for scripts/bench-flushall: it fills a RESP server (on a
// Unix socket) with -keys keys of -value bytes, starts -probes clients
// that each GET one key in a loop, each on its own connection, and after a
// quiet window of the same length as the flush's, sends FLUSHALL (with
// -arg, e.g. ASYNC) on another connection. It waits for the server to
// finish freeing what the flush removed (INFO: tiercache's
// flush_purging:0, redis-server's lazyfree_pending_objects:0) and prints
// one RESULT line: the FLUSHALL's reply time, the time until the server
// was done, the longest GET wait and the 99.9th percentile inside that
// window, the GETs served in it, and the longest GET wait of the quiet
// window before it (the noise of the machine).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	socket := flag.String("socket", "", "server's Unix socket")
	keys := flag.Int("keys", 63000, "keys to fill before the flush")
	value := flag.Int("value", 64, "value bytes")
	probes := flag.Int("probes", 2, "clients GETting while the flush runs")
	arg := flag.String("arg", "", "FLUSHALL's argument: ASYNC, SYNC or empty")
	flag.Parse()
	if *socket == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*socket, *keys, *value, *probes, *arg); err != nil {
		fmt.Fprintln(os.Stderr, "flushlat:", err)
		os.Exit(1)
	}
}

func client(socket string) *redis.Client {
	return redis.NewClient(&redis.Options{Network: "unix", Addr: socket, PoolSize: 1, MinIdleConns: 1,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute, Protocol: 2})
}

// fill sets n keys of size bytes, 1000 per pipelined round trip.
func fill(ctx context.Context, c *redis.Client, n, size int) error {
	if err := c.FlushAll(ctx).Err(); err != nil {
		return err
	}
	if err := waitDone(ctx, c); err != nil {
		return err
	}
	v := strings.Repeat("v", size)
	for i := 0; i < n; i += 1000 {
		p := c.Pipeline()
		for j := i; j < min(i+1000, n); j++ {
			p.Set(ctx, fmt.Sprint("key:", j), v, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
	}
	got, err := c.DBSize(ctx).Result()
	if err != nil {
		return err
	}
	if got != int64(n) {
		return fmt.Errorf("DBSIZE %d after filling %d keys", got, n)
	}
	return c.Set(ctx, "probe", v, 0).Err()
}

// waitDone polls INFO until the server freed what a flush removed.
func waitDone(ctx context.Context, c *redis.Client) error {
	for {
		info, err := c.Info(ctx).Result()
		if err != nil {
			return err
		}
		purging := strings.Contains(info, "flush_purging:1\r")
		lazy := strings.Contains(info, "lazyfree_pending_objects:") && !strings.Contains(info, "lazyfree_pending_objects:0\r")
		if !purging && !lazy {
			return nil
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// window records the GET waits of one span.
type window struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (w *window) add(d time.Duration) {
	w.mu.Lock()
	w.waits = append(w.waits, d)
	w.mu.Unlock()
}

func (w *window) summary() (longest, p999 time.Duration, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.waits) == 0 {
		return 0, 0, 0
	}
	slices.Sort(w.waits)
	return w.waits[len(w.waits)-1], w.waits[len(w.waits)*999/1000], len(w.waits)
}

func run(socket string, keys, value, probes int, arg string) error {
	ctx := context.Background()
	c := client(socket)
	defer c.Close()
	if err := fill(ctx, c, keys, value); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	var cur atomic.Pointer[window]
	quiet, during := new(window), new(window)
	cur.Store(quiet)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, probes)
	for i := 0; i < probes; i++ {
		pc := client(socket)
		defer pc.Close()
		if err := pc.Ping(ctx).Err(); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				w0 := cur.Load()
				t0 := time.Now()
				err := pc.Get(ctx, "probe").Err()
				d := time.Since(t0)
				if err != nil && err != redis.Nil {
					errs <- err
					return
				}
				// A GET that overlapped the flush's window counts there.
				switch w1 := cur.Load(); {
				case w0 == during || w1 == during:
					during.add(d)
				case w0 == quiet && w1 == quiet:
					quiet.add(d)
				}
			}
		}()
	}
	// The quiet window: as long as a flush of this many keys takes on
	// main at most (issue 21: 65 ms for 63k keys), at least 200 ms.
	span := max(200*time.Millisecond, time.Duration(keys)*2*time.Microsecond)
	time.Sleep(span)
	cur.Store(during)
	args := []any{"FLUSHALL"}
	if arg != "" {
		args = append(args, arg)
	}
	t0 := time.Now()
	if err := c.Do(ctx, args...).Err(); err != nil {
		return fmt.Errorf("FLUSHALL %s: %w", arg, err)
	}
	reply := time.Since(t0)
	if err := waitDone(ctx, c); err != nil {
		return err
	}
	done := time.Since(t0)
	cur.Store(new(window))
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		return fmt.Errorf("probe GET: %w", err)
	}
	ql, qp, qn := quiet.summary()
	dl, dp, dn := during.summary()
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	fmt.Printf("RESULT keys=%d arg=%s reply_ms=%.2f done_ms=%.2f get_max_ms=%.2f get_p999_ms=%.3f gets=%d quiet_max_ms=%.2f quiet_p999_ms=%.3f quiet_gets=%d\n",
		keys, cmp.Or(arg, "none"), ms(reply), ms(done), ms(dl), ms(dp), dn, ms(ql), ms(qp), qn)
	return nil
}
