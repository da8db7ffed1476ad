package crashloop

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// worker runs one connection's load until stop is closed or the connection
// fails (the kill), recording each key's log.
// evictable: a key may be dropped while the cache runs (drain and cache
// modes), but only once the cold store reclaimed records to make room
// (coldReclaimed): while it has room, backpressure keeps every
// acknowledged write (tier T25); writethrough keeps every key in cold.
func worker(rc *redis.Client, o *Options, w int, logs map[string]*keyLog, aggs map[string]*aggLog, seq *uint64, seed uint64, evictable bool, stop <-chan struct{}, errf func(string, ...any)) {
	r := rand.New(rand.NewPCG(seed, uint64(w)))
	ctx := context.Background()
	for {
		select {
		case <-stop:
			return
		default:
		}
		if r.IntN(5) == 0 { // the worker's list or hash (invariant 7)
			key := listKey(w)
			if r.IntN(2) == 0 {
				key = hashKey(w)
			}
			if !aggOp(ctx, rc, key, aggs[key], seq, r.IntN(100)) {
				return // the kill: the operation stays pending
			}
			continue
		}
		key := keyName(w, r.IntN(o.Keys))
		l := logs[key]
		next := l.acked
		var err error
		switch op := r.IntN(100); {
		case op < 45: // SET, a fresh key or an overwrite
			*seq++
			size := crashSize(r, o.MaxValue)
			next = keyState{present: true, seq: *seq, size: size}
			l.issued[*seq] = size
			l.pending = &next
			err = rc.Set(ctx, key, crashValue(key, *seq, size), 0).Err()
		case op < 60: // DEL
			next = keyState{}
			l.pending = &next
			err = rc.Del(ctx, key).Err()
		case op < 70: // PEXPIRE, an hour or under a second
			ttl := time.Hour
			if r.IntN(2) == 0 {
				ttl = time.Duration(100+r.IntN(900)) * time.Millisecond
			}
			if next.present {
				next.exp, next.expHi = time.Now().Add(ttl), time.Now().Add(time.Hour) // until the reply
			}
			l.pending = &next
			var ok bool
			ok, err = rc.PExpire(ctx, key, ttl).Result()
			switch {
			case err == nil && !ok:
				next = keyState{} // absent (or just expired) at the server
			case err == nil:
				next.expHi = time.Now().Add(ttl)
			}
		default: // GET: the live value is the acknowledged one
			sent := time.Now()
			v, gerr := rc.Get(ctx, key).Bytes()
			if gerr != nil && !errors.Is(gerr, redis.Nil) {
				return // the kill
			}
			if !matches(key, l.acked, v, gerr == nil, sent, time.Now()) {
				if gerr != nil && evictable && coldReclaimed(ctx, rc) {
					l.acked = keyState{} // dropped: drain mode is a cache while it runs, and cold was full
					continue
				}
				errf("live GET %s: %d bytes (found %v), the log says %+v; %s", key, len(v), gerr == nil, l.acked, diag(ctx, rc, key))
			}
			continue
		}
		if err != nil && strings.Contains(err.Error(), "the cold tier is behind") {
			l.pending = nil // refused with backpressure (tier T25): nothing changed
			continue
		}
		if err != nil {
			return // the kill: the operation stays pending
		}
		l.acked, l.pending = next, nil
	}
}

func keyName(w, i int) string { return fmt.Sprintf("w%d:%03d", w, i) }

// diag is what the server says of key after a wrong live read, for whoever
// looks into it: where the key is now, its TTL, and the counters of copies
// lost and cold errors.
func diag(ctx context.Context, rc *redis.Client, key string) string {
	where, _ := rc.Do(ctx, "TIER", key).Text()
	ttl, _ := rc.PTTL(ctx, key).Result()
	info, _ := rc.Info(ctx, "tiers").Result()
	var counters []string
	for _, line := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(line, "lost:") || strings.HasPrefix(line, "cold_errors:") || strings.HasPrefix(line, "flusher_drops:") {
			counters = append(counters, line)
		}
	}
	return fmt.Sprintf("now: TIER %q, PTTL %v, %s", where, ttl, strings.Join(counters, " "))
}

// coldReclaimed reports whether the cold store reclaimed records to make
// room since the sidecar started (INFO tiers tier_cold_evictions): until
// it did, the cache drops no acknowledged write (tier T25), so a key
// missing while it runs is lost.
func coldReclaimed(ctx context.Context, rc *redis.Client) bool {
	info, err := rc.Info(ctx, "tiers").Result()
	if err != nil {
		return true // the kill: the key's state is judged after the restart
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "tier_cold_evictions:"); ok {
			return v != "0"
		}
	}
	return false
}

// runLoad runs the workers for d (then calls kill, if any) and returns once
// all stopped.
func runLoad(rc *redis.Client, o *Options, logs []map[string]*keyLog, aggs []map[string]*aggLog, seqs []uint64, seed uint64, evictable bool, kill func(), d time.Duration, errf func(string, ...any)) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(rc, o, w, logs[w], aggs[w], &seqs[w], seed, evictable, stop, errf)
		}()
	}
	time.Sleep(d)
	if kill != nil {
		kill()
	}
	close(stop)
	wg.Wait()
}
