package tier

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
)

// TestSweepBesideWriters (T55): the background sweep runs every
// millisecond while writers set, retime, persist, copy, rename and delete
// keys of two shards (so the sweep lets their locks go between batches);
// each writer owns its keys and checks every answer against its own
// model, the clock moving only between rounds: no key goes before its
// expiry, and after the last round a sweep leaves no expired key and
// the expiry index holds each live key with an expiry once. In memory,
// and in writethrough mode on the emulated store.
func TestSweepBesideWriters(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		clk := newFakeClock()
		c, err := Open(Options{HotBytes: 64 << 20, Clock: clk.Now, SweepInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		sweepBesideWriters(t, c, clk, 40)
	})
	// Writethrough: each change durable before it is published, the
	// sweep leaving a key with one in flight to the next (T28); DRAM
	// small enough that keys live in cold alone.
	t.Run("writethrough", func(t *testing.T) {
		needURing(t)
		clk := newFakeClock()
		o := restartOptions(t.TempDir(), DurabilityWriteThrough)
		o.HotBytes, o.WarmBytes = 64<<10, 256<<10
		o.Clock, o.SweepInterval = clk.Now, time.Millisecond
		c, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		sweepBesideWriters(t, c, clk, 12)
	})
}

// sweepBesideWriters runs rounds of TestSweepBesideWriters on c, whose
// clock clk is.
func sweepBesideWriters(t *testing.T, c *Cache, clk *fakeClock, rounds int) {
	const writers, perWriter = 4, 1500
	var shards [2]int
	keys := make([][]string, writers)
	for i, n := 0, 0; n < writers*perWriter; i++ {
		k := fmt.Sprintf("k%d", i)
		lo, _ := hashKey([]byte(k))
		sh := shardOfTag(tagOfHash(lo))
		switch {
		case i == 0:
			shards = [2]int{sh, (sh + 1) % shardCount}
		case sh != shards[0] && sh != shards[1]:
			continue
		}
		keys[n%writers] = append(keys[n%writers], k)
		n++
	}
	models := make([]map[string]int64, writers)
	for w := range models {
		models[w] = map[string]int64{}
	}
	clock := rand.New(rand.NewPCG(55, 2))
	if testing.Short() {
		rounds = max(rounds/4, 2)
	}
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := sweepWriter(c, rand.New(rand.NewPCG(uint64(round), uint64(w))), keys[w], models[w]); err != nil {
					errs <- fmt.Errorf("round %d, writer %d: %w", round, w, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if round%10 == 9 {
			clk.Advance(int64(time.Duration(1+clock.IntN(90)) * time.Minute))
		} else {
			clk.Advance(int64(time.Duration(clock.IntN(3000)) * time.Millisecond))
		}
	}
	now := clk.Now()
	c.sweep(now)
	c.sweepMu.Lock() // no background sweep between its batches
	defer c.sweepMu.Unlock()
	for i := range c.dir.shards {
		sh := &c.dir.shards[i]
		sh.mu.RLock()
		err := sh.checkExpiryIndex()
		for k, e := range sh.m {
			if err == nil && e.state == stateLive && backend.Expired(e.exp, now) {
				err = fmt.Errorf("T55: %q expired and the sweep left it", k)
			}
		}
		sh.mu.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range models {
		for k, exp := range m {
			if !backend.Expired(exp, now) && c.Where([]byte(k)) == "" {
				t.Fatalf("%s, expiring at %d (now %d), is gone", k, exp, now)
			}
		}
	}
}

// sweepWriter runs a round of random changes to keys, whose expiries
// model holds (absent: no key; 0: none), checking each answer.
func sweepWriter(c *Cache, r *rand.Rand, keys []string, model map[string]int64) error {
	now := c.now() // the clock moves only between rounds
	alive := func(k string) bool {
		exp, ok := model[k]
		return ok && !backend.Expired(exp, now)
	}
	ttl := func() time.Duration {
		switch r.IntN(4) {
		case 0:
			return time.Duration(1+r.IntN(3000)) * time.Millisecond
		case 1:
			return time.Duration(1+r.IntN(120)) * time.Minute
		}
		return time.Duration(1+r.IntN(10)) * time.Second
	}
	for range 300 {
		k := keys[r.IntN(len(keys))]
		kb := []byte(k)
		switch op := r.IntN(10); op {
		case 0, 1, 2:
			var kept int64
			if alive(k) {
				kept = model[k]
			}
			o, exp := randomSetOptions(r, 3, now, ttl(), kept)
			if _, err := c.Set(kb, []byte("v"), o); err != nil {
				return err
			}
			model[k] = exp
		case 3:
			d := ttl()
			if got := c.Expire(kb, d); got != alive(k) {
				return fmt.Errorf("Expire(%s) = %v, the model says %v (expiry %d, now %d)", k, got, alive(k), model[k], now)
			}
			if alive(k) {
				model[k] = backend.ExpiryAfter(now, d)
			}
		case 4:
			ok, err := c.Persist(kb)
			if err != nil || ok != (alive(k) && model[k] != 0) {
				return fmt.Errorf("Persist(%s) = %v, %v, the model's expiry %d (now %d)", k, ok, err, model[k], now)
			}
			if alive(k) {
				model[k] = 0
			}
		case 5:
			d := ttl()
			_, ok, err := c.GetEx(nil, kb, Expiry{TTL: d})
			if err != nil || ok != alive(k) {
				return fmt.Errorf("GetEx(%s) = %v, %v, the model says %v", k, ok, err, alive(k))
			}
			if ok {
				model[k] = backend.ExpiryAfter(now, d)
			}
		case 6:
			if _, err := c.Delete(kb); err != nil {
				return err
			}
			delete(model, k)
		case 7, 8:
			dst := keys[r.IntN(len(keys))]
			if dst == k {
				continue
			}
			move := op == 7
			var ok bool
			var err error
			if move {
				ok, err = c.Rename(kb, []byte(dst), false)
				if !alive(k) && err == ErrNoSuchKey {
					err = nil
				}
			} else {
				ok, err = c.Copy(kb, []byte(dst), true)
			}
			if err != nil || ok != alive(k) {
				return fmt.Errorf("move %v %s to %s = %v, %v, the model says %v", move, k, dst, ok, err, alive(k))
			}
			if ok {
				model[dst] = model[k]
				if move {
					delete(model, k)
				}
			}
		default:
			_, ok, err := c.Get(nil, kb)
			if err != nil || ok != alive(k) {
				return fmt.Errorf("Get(%s) = %v, %v, the model says %v (expiry %d, now %d)", k, ok, err, alive(k), model[k], now)
			}
		}
	}
	return nil
}
