package server

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/tier"
)

// hfeField is a field of the model hash: its value and expiry (unix ms,
// 0 for none).
type hfeField struct {
	name, value string
	exp         int64
}

// hfeModel is a client's hashes as Redis 7.4 and 8 define them with
// field expiry, fields in insertion order; an expired field is gone.
type hfeModel map[string][]hfeField

// live drops key's expired fields (and the key with its last) and returns
// the rest.
func (m hfeModel) live(key string, now int64) []hfeField {
	fs := slices.DeleteFunc(m[key], func(f hfeField) bool { return f.exp != 0 && f.exp <= now })
	if len(fs) == 0 {
		delete(m, key)
		return nil
	}
	m[key] = fs
	return fs
}

func hfeFind(fs []hfeField, name string) int {
	return slices.IndexFunc(fs, func(f hfeField) bool { return f.name == name })
}

// RESP2 replies of the model.
func rInt(n int64) string   { return ":" + strconv.FormatInt(n, 10) + "\r\n" }
func rBulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func rArr(items []string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

const rNil = "$-1\r\n"

// timeOpt appends HGETEX's or HSETEX's option: PX (mode 0, at now + its
// time), other (mode 1) or none (mode 2).
func timeOpt(r *rand.Rand, cmd []string, other string, now int64) ([]string, int, int64) {
	switch mode := r.IntN(3); mode {
	case 0:
		ms := int64(r.IntN(3000))
		return append(cmd, "PX", strconv.FormatInt(ms, 10)), mode, now + ms
	case 1:
		return append(cmd, other), mode, 0
	default:
		return cmd, mode, 0
	}
}

// hfeStep draws one command on key (of the model m at now) and returns it
// with the reply the model gives, applying its change to m.
func hfeStep(r *rand.Rand, m hfeModel, key string, now int64) ([]string, string) {
	field := func() string { return "f" + strconv.Itoa(r.IntN(6)) }
	names := func() []string {
		n := 1 + r.IntN(3)
		out := make([]string, n)
		for i := range out {
			out[i] = field()
		}
		return out
	}
	withFields := func(cmd []string, ns []string) []string {
		return append(append(cmd, "FIELDS", strconv.Itoa(len(ns))), ns...)
	}
	fs := m.live(key, now)
	setFs := func() {
		if len(fs) == 0 {
			delete(m, key)
		} else {
			m[key] = fs
		}
	}
	switch op := r.IntN(20); op {
	case 0, 1: // HSET: a field set again loses its expiry
		f, v := field(), strconv.Itoa(r.IntN(100))
		added := 0
		if j := hfeFind(fs, f); j >= 0 {
			fs[j].value, fs[j].exp = v, 0
		} else {
			fs = append(fs, hfeField{f, v, 0})
			added = 1
		}
		setFs()
		return []string{"HSET", key, f, v}, rInt(int64(added))
	case 2: // HDEL
		ns := names()
		n := 0
		for _, f := range ns {
			if j := hfeFind(fs, f); j >= 0 {
				fs = slices.Delete(fs, j, j+1)
				n++
			}
		}
		setFs()
		return append([]string{"HDEL", key}, ns...), rInt(int64(n))
	case 3: // HMGET
		ns := names()
		var out []string
		for _, f := range ns {
			if j := hfeFind(fs, f); j >= 0 {
				out = append(out, rBulk(fs[j].value))
			} else {
				out = append(out, rNil)
			}
		}
		return append([]string{"HMGET", key}, ns...), rArr(out)
	case 4: // HGETALL, in insertion order
		var out []string
		for _, f := range fs {
			out = append(out, rBulk(f.name), rBulk(f.value))
		}
		return []string{"HGETALL", key}, rArr(out)
	case 5:
		return []string{"HLEN", key}, rInt(int64(len(fs)))
	case 6:
		f := field()
		return []string{"HEXISTS", key, f}, rInt(int64(min(1, hfeFind(fs, f)+1)))
	case 7: // HINCRBY keeps the expiry
		f, by := field(), int64(r.IntN(10))
		j := hfeFind(fs, f)
		if j < 0 {
			fs = append(fs, hfeField{f, "0", 0})
			j = len(fs) - 1
		}
		v, _ := strconv.ParseInt(fs[j].value, 10, 64)
		fs[j].value = strconv.FormatInt(v+by, 10)
		setFs()
		return []string{"HINCRBY", key, f, strconv.FormatInt(by, 10)}, rInt(v + by)
	case 8, 9: // HPEXPIRE with a condition: past times delete
		ms := int64(r.IntN(3000)) - 200
		if r.IntN(4) == 0 {
			ms = 0
		}
		at := now + max(ms, 0)
		cmd := []string{"HPEXPIRE", key, strconv.FormatInt(max(ms, 0), 10)}
		if r.IntN(2) == 0 {
			cmd = []string{"HPEXPIREAT", key, strconv.FormatInt(now+ms, 10)}
			at = now + ms
		}
		cond := []string{"", "NX", "XX", "GT", "LT"}[r.IntN(5)]
		if cond != "" {
			cmd = append(cmd, cond)
		}
		ns := names()
		var out []string
		for _, f := range ns {
			j := hfeFind(fs, f)
			if j < 0 {
				out = append(out, rInt(-2))
				continue
			}
			prev := fs[j].exp
			ok := true
			switch {
			case prev == 0:
				ok = cond != "XX" && cond != "GT"
			case cond == "NX":
				ok = false
			case cond == "GT":
				ok = prev < at
			case cond == "LT":
				ok = prev > at
			}
			switch {
			case !ok:
				out = append(out, rInt(0))
			case at <= now:
				fs = slices.Delete(fs, j, j+1)
				out = append(out, rInt(2))
			default:
				fs[j].exp = at
				out = append(out, rInt(1))
			}
		}
		setFs()
		return withFields(cmd, ns), rArr(out)
	case 10: // HPERSIST
		ns := names()
		var out []string
		for _, f := range ns {
			switch j := hfeFind(fs, f); {
			case j < 0:
				out = append(out, rInt(-2))
			case fs[j].exp == 0:
				out = append(out, rInt(-1))
			default:
				fs[j].exp = 0
				out = append(out, rInt(1))
			}
		}
		return withFields([]string{"HPERSIST", key}, ns), rArr(out)
	case 11: // HPTTL, HTTL, HPEXPIRETIME, HEXPIRETIME
		name := []string{"HPTTL", "HTTL", "HPEXPIRETIME", "HEXPIRETIME"}[r.IntN(4)]
		ns := names()
		var out []string
		for _, f := range ns {
			switch j := hfeFind(fs, f); {
			case j < 0:
				out = append(out, rInt(-2))
			case fs[j].exp == 0:
				out = append(out, rInt(-1))
			case name == "HPTTL":
				out = append(out, rInt(fs[j].exp-now))
			case name == "HTTL":
				out = append(out, rInt((fs[j].exp+999-now)/1000))
			case name == "HPEXPIRETIME":
				out = append(out, rInt(fs[j].exp))
			default:
				out = append(out, rInt((fs[j].exp+999)/1000))
			}
		}
		return withFields([]string{name, key}, ns), rArr(out)
	case 12: // HGETDEL
		ns := names()
		var out []string
		for _, f := range ns {
			if j := hfeFind(fs, f); j >= 0 {
				out = append(out, rBulk(fs[j].value))
				fs = slices.Delete(fs, j, j+1)
			} else {
				out = append(out, rNil)
			}
		}
		setFs()
		return withFields([]string{"HGETDEL", key}, ns), rArr(out)
	case 13, 14: // HGETEX
		cmd, mode, at := timeOpt(r, []string{"HGETEX", key}, "PERSIST", now)
		ns := names()
		var out []string
		for _, f := range ns {
			j := hfeFind(fs, f)
			if j < 0 {
				out = append(out, rNil)
				continue
			}
			out = append(out, rBulk(fs[j].value))
			switch {
			case mode == 1:
				fs[j].exp = 0
			case mode == 0 && at <= now:
				fs = slices.Delete(fs, j, j+1)
			case mode == 0:
				fs[j].exp = at
			}
		}
		setFs()
		return withFields(cmd, ns), rArr(out)
	case 15, 16: // HSETEX
		cmd := []string{"HSETEX", key}
		cond := []string{"", "FNX", "FXX"}[r.IntN(3)]
		if cond != "" {
			cmd = append(cmd, cond)
		}
		cmd, mode, at := timeOpt(r, cmd, "KEEPTTL", now)
		ns := names()
		pairs := []string{}
		for _, f := range ns {
			pairs = append(pairs, f, strconv.Itoa(r.IntN(100)))
		}
		cmd = append(append(cmd, "FIELDS", strconv.Itoa(len(ns))), pairs...)
		for _, f := range ns {
			if found := hfeFind(fs, f) >= 0; cond == "FNX" && found || cond == "FXX" && !found {
				return cmd, rInt(0)
			}
		}
		for i := 0; i < len(pairs); i += 2 {
			j := hfeFind(fs, pairs[i])
			if j < 0 {
				fs = append(fs, hfeField{name: pairs[i]})
				j = len(fs) - 1
			}
			fs[j].value = pairs[i+1]
			switch {
			case mode == 0 && at <= now:
				fs = slices.Delete(fs, j, j+1)
			case mode == 0:
				fs[j].exp = at
			case mode == 2:
				fs[j].exp = 0
			}
		}
		setFs()
		return cmd, rInt(1)
	case 17: // HSCAN of a small hash: all of it, cursor 0
		var out []string
		for _, f := range fs {
			out = append(out, rBulk(f.name), rBulk(f.value))
		}
		return []string{"HSCAN", key, "0"}, rArr([]string{rBulk("0"), rArr(out)})
	case 18: // HRANDFIELD with a count past the hash: all of it
		var out []string
		for _, f := range fs {
			out = append(out, rBulk(f.name), rBulk(f.value))
		}
		return []string{"HRANDFIELD", key, "100", "WITHVALUES"}, rArr(out)
	default:
		f := field()
		v := rNil
		if j := hfeFind(fs, f); j >= 0 {
			v = rBulk(fs[j].value)
		}
		return []string{"HGET", key, f}, v
	}
}

// hfeModelRun runs clients at once, each on keys of its own against a
// model of its own, in rounds between which the clock moves forward;
// every reply must be the model's. It then moves the clock past every
// expiry and waits for the sweeper: a hash left with no field is gone
// (EXISTS 0), one with fields without expiry keeps just those.
func hfeModelRun(t *testing.T, path string, clock *testClock, clients, rounds, steps int, seed uint64) {
	models := make([]hfeModel, clients)
	conns := make([]*exactConn, clients)
	for i := range clients {
		models[i], conns[i] = hfeModel{}, dialExact(t, path)
	}
	var mu sync.Mutex
	var failure string
	for round := range rounds {
		now := clock.time().UnixMilli()
		var wg sync.WaitGroup
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed, uint64(round*clients+i)))
				for step := range steps {
					key := fmt.Sprintf("c%d:h%d", i, r.IntN(3))
					args, want := hfeStep(r, models[i], key, now)
					if got := conns[i].do(args...); got != want {
						mu.Lock()
						failure = fmt.Sprintf("round %d client %d step %d %q:\n got  %q\n want %q", round, i, step, args, got, want)
						mu.Unlock()
						return
					}
				}
			}()
		}
		wg.Wait()
		if failure != "" {
			t.Fatalf("%s (seed %d)", failure, seed)
		}
		clock.advance(time.Duration(rand.New(rand.NewPCG(seed, uint64(round))).IntN(1500)) * time.Millisecond)
	}
	clock.advance(time.Hour)
	now := clock.time().UnixMilli()
	c := conns[0]
	deadline := time.Now().Add(10 * time.Second)
	for i, m := range models {
		for k := range 3 {
			key := fmt.Sprintf("c%d:h%d", i, k)
			fs := m.live(key, now)
			for {
				got := c.do("EXISTS", key)
				if got == rInt(int64(min(1, len(fs)))) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: EXISTS %q with %d fields left: the sweeper did not remove it", key, got, len(fs))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got, want := c.do("HLEN", key), rInt(int64(len(fs))); got != want {
				t.Fatalf("%s: HLEN %q, want %q", key, got, want)
			}
		}
	}
}

// TestHashFieldExpiryModel (S43): clients changing hashes with every hash
// and field expiry command at once, while time moves, get the replies of
// a model of Redis 7.4 and 8's field expiry (an expired field is seen by
// no command); once every expiry passed, the sweeper removed each hash
// left without fields. In DRAM, and with a hot tier of 32 KiB that keeps
// evicting the hashes' structures to the cold tier and loading them back.
func TestHashFieldExpiryModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rounds := 30
	if testing.Short() {
		rounds = 8
	}
	t.Run("hot", func(t *testing.T) {
		clock := newTestClock()
		_, path := startServerWith(t, newClockedCache(t, clock), nil)
		hfeModelRun(t, path, clock, 4, rounds, 60, seed)
	})
	t.Run("cold", func(t *testing.T) {
		clock := newTestClock()
		tc := openColdCache(t, func(o *tier.Options, _ *coldstore.Config) {
			o.HotBytes, o.HotSegmentBytes, o.HotMaxValue, o.Clock = 32<<10, 4<<10, 4<<10, clock.now
		})
		_, path := startServerWith(t, tc, nil)
		stop, filled := make(chan struct{}), make(chan struct{})
		go func() { // other hashes push the model's out of DRAM
			defer close(filled)
			r := dialExact(t, path)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r.do("HSET", fmt.Sprint("filler-", i%256), "f", strings.Repeat("x", 1024))
			}
		}()
		hfeModelRun(t, path, clock, 4, rounds, 60, seed)
		close(stop)
		<-filled
		if s := tc.Stats(); s.DRAM.LiveDemoted == 0 {
			t.Fatalf("no hash was evicted to cold: the test did not exercise it (%+v)", s.DRAM)
		}
	})
}

// TestHashFieldExpiryRestart (S43): field expiries are kept in the record,
// so they survive a restart on the same cold store: a field's expiry reads
// back, a field expired meanwhile is seen by nothing, and the hash read
// after the restart is swept like any other.
func TestHashFieldExpiryRestart(t *testing.T) {
	dir := t.TempDir()
	clock := newTestClock()
	open := func() (path string, stop func()) {
		cc := coldstore.Config{DataDir: dir, Capacity: 16 << 20, RegionBytes: 256 << 10}
		tc, err := tier.Open(tier.Options{HotBytes: testHotBytes, Clock: clock.now, Durability: tier.DurabilityWriteThrough,
			OpenCold: func(p backend.Params) (backend.Store, error) { return coldstore.Open(cc, p) }})
		if err != nil {
			t.Fatal(err)
		}
		path = shortSocket(t)
		s, err := New(tc, Options{UnixSocket: path, ShutdownTimeout: 2 * time.Second})
		if err == nil {
			err = s.Start()
		}
		if err != nil {
			tc.Close()
			t.Fatal(err)
		}
		var once sync.Once
		stop = func() {
			once.Do(func() {
				if err := errors.Join(s.Close(), tc.Close()); err != nil {
					t.Error(err)
				}
			})
		}
		t.Cleanup(stop)
		return path, stop
	}
	path, stop := open()
	c := dialExact(t, path)
	c.do("HSETEX", "doc", "PX", "5000", "FIELDS", "2", "chunk1", "a", "chunk2", "b")
	c.do("HSET", "doc", "title", "t")
	c.do("HSETEX", "gone", "PX", "1000", "FIELDS", "1", "x", "y")
	at := c.do("HPEXPIRETIME", "doc", "FIELDS", "3", "chunk1", "chunk2", "title")
	stop()
	path, _ = open()
	c = dialExact(t, path)
	if got := c.do("HPEXPIRETIME", "doc", "FIELDS", "3", "chunk1", "chunk2", "title"); got != at {
		t.Fatalf("after the restart HPEXPIRETIME %q, before %q", got, at)
	}
	clock.advance(2 * time.Second)
	if got := c.do("HGETALL", "gone"); got != "*0\r\n" {
		t.Fatalf("HGETALL of a hash whose field expired during the restart: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.do("EXISTS", "gone") != rInt(0) { // read since the restart: the sweeper knows it
		if time.Now().After(deadline) {
			t.Fatal("the hash read after the restart was not swept")
		}
		time.Sleep(20 * time.Millisecond)
	}
	clock.advance(5 * time.Second)
	if got, want := c.do("HGETALL", "doc"), rArr([]string{rBulk("title"), rBulk("t")}); got != want {
		t.Fatalf("HGETALL doc after its chunks expired: %q, want %q", got, want)
	}
}
