package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zeebo/xxh3"
)

// The crash loop: the real sidecar (this test binary re-executed, as in
// TestPeakRSSWithinBudget) under a mixed load from several connections is
// SIGKILLed at random moments and restarted on its store, and every key is
// checked against the log of the operations acknowledged and issued. Each
// connection owns its keys, so a key's operations are one sequence: the
// state after the last acknowledged one, and at most one issued and not
// answered when the process died.

const (
	crashWorkers = 4
	crashKeys    = 150 // per worker
)

// quietRedis drops go-redis's log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// keyState is what a key holds after some prefix of its operations.
type keyState struct {
	present bool
	seq     uint64    // the SET that wrote the value
	size    int       // its length
	exp     time.Time // zero: no expiry; else the earliest the server may have set
	expHi   time.Time // the latest it may have set (the command's reply came then)
}

// keyLog is one key's history: the state after its last acknowledged
// operation, the state its operation in flight at the kill would give, and
// every value ever issued for it (to tell an old value from a torn one).
type keyLog struct {
	acked   keyState
	pending *keyState
	issued  map[uint64]int // seq → size
}

// crashValue is the value of SET number seq of key: size bytes derived
// from (key, seq), so a read names the SET it came from.
func crashValue(key string, seq uint64, size int) []byte {
	v := make([]byte, size)
	var pat [64]byte
	h := xxh3.HashString128(fmt.Sprint(key, "/", seq))
	for i := 0; i < 64; i += 16 {
		binary.LittleEndian.PutUint64(pat[i:], h.Lo+uint64(i))
		binary.LittleEndian.PutUint64(pat[i+8:], h.Hi^uint64(i))
	}
	for i := 0; i < size; i += 64 {
		copy(v[i:], pat[:])
	}
	if size >= 8 {
		binary.LittleEndian.PutUint64(v, seq)
	}
	return v
}

// crashSize draws a value size from 1 B to 4 MiB, mostly small.
func crashSize(r *rand.Rand) int {
	switch p := r.IntN(1000); {
	case p < 750:
		return 1 + r.IntN(1024)
	case p < 980:
		return 1024 + r.IntN(64<<10)
	default:
		return 64<<10 + r.IntN(4<<20-64<<10+1)
	}
}

// crashSidecar is one run of the sidecar on the store in dir.
type crashSidecar struct {
	cmd  *exec.Cmd
	sock string
	rc   *redis.Client
	up   time.Duration // from exec to the first PONG
}

func startCrashSidecar(t *testing.T, dir, durability string) *crashSidecar {
	t.Helper()
	sock := shortSocket(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "GOMEMLIMIT=", "TIERCACHE_WARM_NODE=unbound", "TIERCACHE_COLD_CAPACITY=1GiB",
		serveEnv+"=serve -socket "+sock+" -metrics off -log-level error -data "+dir+" -durability "+durability+
			" -hot-bytes 16MiB -warm-bytes 16MiB")
	logf, err := os.OpenFile(dir+"/sidecar.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &crashSidecar{cmd: cmd, sock: sock}
	s.rc = redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: crashWorkers + 1, MaxRetries: -1,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	ctx := context.Background()
	for s.rc.Ping(ctx).Err() != nil {
		if time.Since(start) > 60*time.Second {
			log, _ := os.ReadFile(dir + "/sidecar.log")
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the sidecar did not answer PING within a minute: %s", log)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.up = time.Since(start)
	return s
}

// stop ends the sidecar: SIGKILL, or SIGTERM (a clean stop, which must
// exit 0).
func (s *crashSidecar) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	s.rc.Close()
	s.cmd.Process.Signal(sig)
	err := s.cmd.Wait()
	if sig == syscall.SIGTERM && err != nil {
		t.Fatalf("clean stop: %v", err)
	}
}

// crashTally counts what the checks found.
type crashTally struct {
	keys, lost, resurrected, vanished, torn, staleAfterKill, dropped int
}

func (c crashTally) bad() int { return c.lost + c.resurrected + c.vanished + c.torn }

// crashWorker runs one connection's load until stop is closed or the
// connection fails (the kill), recording each key's log.
// evictable: a key may be dropped while the cache runs (drain and cache
// modes: DRAM full and the flash budget spent, T7); writethrough keeps
// every key in cold.
func crashWorker(rc *redis.Client, w int, logs map[string]*keyLog, seq *uint64, seed uint64, evictable bool, stop <-chan struct{}, errf func(string, ...any)) {
	r := rand.New(rand.NewPCG(seed, uint64(w)))
	ctx := context.Background()
	for {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("w%d:%03d", w, r.IntN(crashKeys))
		l := logs[key]
		next := l.acked
		var err error
		switch op := r.IntN(100); {
		case op < 45: // SET, a fresh key or an overwrite
			*seq++
			size := crashSize(r)
			next = keyState{present: true, seq: *seq, size: size}
			l.issued[*seq] = size
			l.pending = &next
			err = rc.Set(ctx, key, crashValue(key, *seq, size), 0).Err()
		case op < 60: // DEL
			next = keyState{}
			l.pending = &next
			err = rc.Del(ctx, key).Err()
		case op < 70: // EXPIRE, an hour or under a second
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
			v, gerr := rc.Get(ctx, key).Bytes()
			if gerr != nil && !errors.Is(gerr, redis.Nil) {
				return // the kill
			}
			if !matches(key, l.acked, v, gerr == nil, time.Now()) {
				if gerr != nil && evictable {
					l.acked = keyState{} // dropped: drain mode is a cache while it runs (T7)
					continue
				}
				errf("live GET %s: %d bytes (found %v), the log says %+v; %s", key, len(v), gerr == nil, l.acked, crashDiag(ctx, rc, key))
			}
			continue
		}
		if err != nil {
			return // the kill: the operation stays pending
		}
		l.acked, l.pending = next, nil
	}
}

// crashDiag is what the server says of key after a wrong live read, for
// whoever looks into it: where the key is now, its TTL, and the counters
// of copies lost and cold errors.
func crashDiag(ctx context.Context, rc *redis.Client, key string) string {
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

// liveAt reports whether s holds a value at t, and whether that is certain
// (an expiry within a second of t may have passed on either side).
func liveAt(s keyState, t time.Time) (live, sure bool) {
	if !s.present {
		return false, true
	}
	if s.exp.IsZero() {
		return true, true
	}
	switch {
	case t.Before(s.exp.Add(-time.Second)):
		return true, true
	case t.After(s.expHi.Add(time.Second)):
		return false, true
	}
	return t.Before(s.exp), false // within a second of when it may have expired
}

// matches reports whether a read (v, found) at t is what s gives.
func matches(key string, s keyState, v []byte, found bool, t time.Time) bool {
	live, sure := liveAt(s, t)
	switch {
	case !found:
		return !live || !sure
	case !live && sure:
		return false
	}
	return len(v) == s.size && string(v) == string(crashValue(key, s.seq, s.size))
}

// checkKey classifies one key read after a restart; it returns the state
// the key now has (the log's acknowledged state from here on).
func checkKey(key string, l *keyLog, v []byte, found bool, t time.Time, exact bool, tally *crashTally) (keyState, string) {
	tally.keys++
	if matches(key, l.acked, v, found, t) {
		return l.acked, ""
	}
	if l.pending != nil && matches(key, *l.pending, v, found, t) {
		return *l.pending, ""
	}
	var seq uint64
	if found {
		for s, size := range l.issued {
			if len(v) == size && string(v) == string(crashValue(key, s, size)) {
				seq = s
			}
		}
		if seq == 0 {
			tally.torn++
			return keyState{}, fmt.Sprintf("%s: %d bytes that no SET of it wrote (torn or foreign)", key, len(v))
		}
	}
	got := keyState{present: found, seq: seq, size: len(v)}
	if !exact {
		tally.staleAfterKill++ // drain after a kill promises only values issued for the key
		return got, ""
	}
	ackLive, _ := liveAt(l.acked, t)
	switch {
	case !found && l.pending != nil && l.pending.present:
		tally.vanished++
		return got, fmt.Sprintf("%s: reads nil; acknowledged %+v, in flight %+v (vanished)", key, l.acked, *l.pending)
	case !found:
		tally.lost++
		return got, fmt.Sprintf("%s: reads nil; acknowledged %+v (lost)", key, l.acked)
	case !ackLive:
		tally.resurrected++
		return got, fmt.Sprintf("%s: reads SET %d; acknowledged %+v (resurrected)", key, seq, l.acked)
	default:
		tally.lost++
		return got, fmt.Sprintf("%s: reads SET %d; acknowledged %+v (an acknowledged write lost)", key, seq, l.acked)
	}
}

// checkAll reads every key through the restarted sidecar.
// With held, it is the read before a drain-mode clean stop: a key that
// reads nil was dropped while the cache ran (T7), and is absent from then on.
func checkAll(t *testing.T, rc *redis.Client, logs map[string]*keyLog, exact, held bool, tally *crashTally) {
	t.Helper()
	ctx := context.Background()
	keys := make([]string, 0, len(logs))
	for k := range logs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i := 0; i < len(keys); i += 50 {
		batch := keys[i:min(i+50, len(keys))]
		vals, err := rc.MGet(ctx, batch...).Result()
		if err != nil {
			t.Fatalf("MGET after the restart: %v", err)
		}
		now := time.Now()
		for j, k := range batch {
			s, found := vals[j].(string)
			l := logs[k]
			if held && !found {
				if live, _ := liveAt(l.acked, now); live {
					tally.dropped++
				}
				l.acked = keyState{}
				continue
			}
			state, bad := checkKey(k, l, []byte(s), found, now, exact, tally)
			if bad != "" {
				t.Error(bad)
			}
			if state.present && (!exact || state.exp.IsZero() && (!l.acked.exp.IsZero() || l.pending != nil && !l.pending.exp.IsZero())) {
				// The expiry the key came back with: after a drain-mode
				// kill its cold copy may carry an older one (T17).
				state.exp, state.expHi = time.Time{}, time.Time{}
				if ttl, err := rc.PTTL(ctx, k).Result(); err == nil && ttl > 0 {
					state.exp, state.expHi = now.Add(ttl), time.Now().Add(ttl)
				}
			}
			l.acked, l.pending = state, nil
		}
	}
}

// runLoad runs the workers for d (or until the kill) and returns once all
// stopped.
func runLoad(rc *redis.Client, logs []map[string]*keyLog, seqs []uint64, seed uint64, evictable bool, kill func(), d time.Duration, errf func(string, ...any)) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			crashWorker(rc, w, logs[w], &seqs[w], seed, evictable, stop, errf)
		}()
	}
	time.Sleep(d)
	if kill != nil {
		kill()
	}
	close(stop)
	wg.Wait()
}

// TestCrashLoop: writethrough survives 35 SIGKILLs at random moments with
// no acknowledged write lost, no acknowledged delete back, no key vanished
// by an interrupted overwrite and no torn or foreign value; drain mode
// comes back exactly after each of 15 clean stops, and after each of 15
// SIGKILLs every key reads nil or a value issued for it.
func TestCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 50 sidecar restarts under load take about two minutes")
	}
	if raceEnabled {
		t.Skip("the race detector makes the sidecar (this binary) too slow for the loop's budget")
	}
	redis.SetLogger(quietRedis{}) // its dial retries while a sidecar starts are expected
	for _, mode := range []struct {
		durability string
		cycles     int
	}{{"writethrough", 35}, {"drain", 15}} {
		t.Run(mode.durability, func(t *testing.T) {
			dir := t.TempDir()
			logs := make([]map[string]*keyLog, crashWorkers)
			for w := range logs {
				logs[w] = map[string]*keyLog{}
				for i := 0; i < crashKeys; i++ {
					logs[w][fmt.Sprintf("w%d:%03d", w, i)] = &keyLog{issued: map[uint64]int{}}
				}
			}
			all := map[string]*keyLog{}
			for _, m := range logs {
				for k, l := range m {
					all[k] = l
				}
			}
			seqs := make([]uint64, crashWorkers)
			var mu sync.Mutex
			errf := func(f string, a ...any) { mu.Lock(); t.Errorf(f, a...); mu.Unlock() }
			r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 18))
			var tally crashTally
			var ups []time.Duration
			kills, cleans := 0, 0
			s := startCrashSidecar(t, dir, mode.durability)
			for cycle := 0; cycle < mode.cycles && !t.Failed(); cycle++ {
				if mode.durability == "drain" {
					runLoad(s.rc, logs, seqs, r.Uint64(), true, nil, time.Duration(50+r.IntN(350))*time.Millisecond, errf)
					checkAll(t, s.rc, all, true, true, &tally) // what the cache holds at the stop
					s.stop(t, syscall.SIGTERM)
					cleans++
					s = startCrashSidecar(t, dir, mode.durability)
					ups = append(ups, s.up)
					checkAll(t, s.rc, all, true, false, &tally)
				}
				runLoad(s.rc, logs, seqs, r.Uint64(), mode.durability != "writethrough", func() { s.cmd.Process.Signal(syscall.SIGKILL) },
					time.Duration(30+r.IntN(400))*time.Millisecond, errf)
				s.stop(t, syscall.SIGKILL)
				kills++
				s = startCrashSidecar(t, dir, mode.durability)
				ups = append(ups, s.up)
				checkAll(t, s.rc, all, mode.durability == "writethrough", false, &tally)
			}
			s.stop(t, syscall.SIGTERM)
			sort.Slice(ups, func(i, j int) bool { return ups[i] < ups[j] })
			var writes uint64
			for _, n := range seqs {
				writes += n
			}
			t.Logf("%s: %d SIGKILLs, %d clean stops, %d SETs issued, %d key checks: %d lost acknowledged writes, %d resurrected deletes, %d vanished, %d torn or foreign; %d older-or-missing after a drain-mode kill, %d dropped while running (drain is a cache); restart to first PONG median %v (range %v-%v)",
				mode.durability, kills, cleans, writes, tally.keys, tally.lost, tally.resurrected, tally.vanished, tally.torn,
				tally.staleAfterKill, tally.dropped, ups[len(ups)/2].Round(time.Millisecond), ups[0].Round(time.Millisecond), ups[len(ups)-1].Round(time.Millisecond))
			if tally.bad() > 0 {
				t.Fatalf("%d bad keys", tally.bad())
			}
		})
	}
}
