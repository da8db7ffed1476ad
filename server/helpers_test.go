package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/tier"
)

// skipOrFail skips with reason, or fails when TIERCACHE_NO_SKIP=1 (CI).
func skipOrFail(t testing.TB, format string, a ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, a...)
	}
	t.Skipf(format, a...)
}

// shortSocket returns a socket path under /tmp short enough for sun_path.
func shortSocket(t testing.TB) string {
	t.Helper()
	f, err := os.CreateTemp("/tmp", "tc-*.sock")
	if err != nil {
		t.Fatal(err)
	}
	p := f.Name()
	f.Close()
	os.Remove(p)
	t.Cleanup(func() { os.Remove(p) })
	return p
}

// mapCache is a plain map implementing Cache for protocol tests; the real
// tier.Cache is exercised by cmd/tiercache's client tests.
type mapCache struct {
	mu       sync.Mutex
	m        map[string]mapItem
	now      func() time.Time
	coldFail string // tier.Stats.ColdWriteError
	// Keys starting with "cold:" play keys on a slow device: View reports
	// cold for them. prefixCalls records the keys of each MGetPrefixAny.
	prefixCalls [][]string
}

type mapItem struct {
	v    []byte
	exp  time.Time
	kind tier.Kind
}

// newMapCache returns a cache whose clock stands still, so TTL replies are
// exact whatever the machine's load (a fake clock).
func newMapCache() *mapCache {
	t0 := time.Now()
	return &mapCache{m: map[string]mapItem{}, now: func() time.Time { return t0 }}
}

func (c *mapCache) live(k string) (mapItem, bool) {
	it, ok := c.m[k]
	if ok && !it.exp.IsZero() && !c.now().Before(it.exp) {
		delete(c.m, k)
		return mapItem{}, false
	}
	return it, ok
}

func (c *mapCache) Get(dst, key []byte) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	if !ok {
		return dst, false, nil
	}
	if it.kind != tier.KindString {
		return dst, false, tier.ErrWrongKind
	}
	return append(dst, it.v...), true, nil
}

func (c *mapCache) View(dst, key []byte, into func(n int) []byte) ([]byte, bool, bool, bool, error) {
	v, ok, err := c.Get(dst, key)
	cold := strings.HasPrefix(string(key), "cold:")
	if ok && err == nil && into != nil {
		if b := into(len(v) - len(dst)); b != nil {
			copy(b, v[len(dst):])
			return dst, true, true, cold, nil
		}
	}
	return v, false, ok, cold, err
}

func (c *mapCache) ViewAny(dst, key []byte) ([]byte, tier.Kind, bool, bool, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	return append(dst, it.v...), it.kind, false, ok, strings.HasPrefix(string(key), "cold:"), nil
}

func (c *mapCache) KindOf(key []byte) (tier.Kind, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	return it.kind, ok
}

// Update is one step, as tier.Cache's: f runs without the map's lock (it
// may call the cache, as the list commands do), and its change applies
// only if the key is still as f saw it, else f runs again.
func (c *mapCache) Update(key []byte, f func(tier.Current) (tier.Change, error)) error {
	same := func(a, b mapItem, aok, bok bool) bool {
		return aok == bok && len(a.v) == len(b.v) && (len(a.v) == 0 || &a.v[0] == &b.v[0]) && a.exp.Equal(b.exp) && a.kind == b.kind
	}
	for {
		c.mu.Lock()
		it, ok := c.live(string(key))
		c.mu.Unlock()
		ch, err := f(tier.Current{Value: it.v, Kind: it.kind, Exists: ok})
		if err != nil {
			return err
		}
		c.mu.Lock()
		if now, nok := c.live(string(key)); !same(it, now, ok, nok) {
			c.mu.Unlock()
			continue
		}
		switch ch.Op {
		case tier.Store:
			c.m[string(key)] = mapItem{v: append([]byte(nil), ch.Value...), exp: it.exp, kind: ch.Kind}
		case tier.Remove:
			delete(c.m, string(key))
		}
		c.mu.Unlock()
		return nil
	}
}

// MGetPrefixAny counts each value as its length (a miss as 0).
func (c *mapCache) MGetPrefixAnyIn(_ *tier.Chunks, keys [][]byte, maxBytes int64) ([][]byte, []tier.Kind, int, error) {
	n, total := len(keys), int64(0)
	c.mu.Lock()
	for i, k := range keys {
		it, _ := c.live(string(k))
		if total += int64(len(it.v)); maxBytes >= 0 && i > 0 && total > maxBytes {
			n = i
			break
		}
	}
	call := []string{}
	for _, k := range keys[:n] {
		call = append(call, string(k))
	}
	c.prefixCalls = append(c.prefixCalls, call)
	vals, kinds := make([][]byte, n), make([]tier.Kind, n)
	for i, k := range keys[:n] {
		if it, ok := c.live(string(k)); ok {
			vals[i], kinds[i] = append([]byte{}, it.v...), it.kind
		}
	}
	c.mu.Unlock()
	return vals, kinds, n, nil
}

func (c *mapCache) MGetIn(_ *tier.Chunks, keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		v, ok, _ := c.Get(nil, k)
		if ok {
			if v == nil {
				v = []byte{}
			}
			out[i] = v
		}
	}
	return out, nil
}

func (c *mapCache) Set(key, value []byte, o SetOptions) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setLocked(key, value, o), nil
}

func (c *mapCache) SetGet(dst, key, value []byte, o SetOptions) ([]byte, bool, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, had := c.live(string(key))
	if had && old.kind != tier.KindString {
		return dst, false, false, tier.ErrWrongKind
	}
	stored := c.setLocked(key, value, o)
	return append(dst, old.v...), had, stored, nil
}

func (c *mapCache) setLocked(key, value []byte, o SetOptions) bool {
	old, exists := c.live(string(key))
	if (o.NX && exists) || (o.XX && !exists) {
		return false
	}
	it := mapItem{v: append([]byte(nil), value...), kind: o.Kind}
	switch {
	case o.KeepTTL:
		it.exp = old.exp
	case o.TTL > 0:
		it.exp = c.now().Add(o.TTL)
	case !o.ExpireAt.IsZero():
		it.exp = o.ExpireAt
	}
	if !it.exp.IsZero() && !it.exp.After(c.now()) {
		delete(c.m, string(key)) // an expiry in the past deletes, as tier.Cache does
		return true
	}
	c.m[string(key)] = it
	return true
}

func (c *mapCache) MSet(kvs [][2][]byte) error {
	for _, kv := range kvs {
		c.Set(kv[0], kv[1], SetOptions{})
	}
	return nil
}

func (c *mapCache) Delete(keys ...[]byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range keys {
		if _, ok := c.live(string(k)); ok {
			delete(c.m, string(k))
			n++
		}
	}
	return n, nil
}

func (c *mapCache) Exists(keys ...[]byte) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range keys {
		if _, ok := c.live(string(k)); ok {
			n++
		}
	}
	return n
}

func (c *mapCache) Expire(key []byte, ttl time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	if !ok {
		return false
	}
	it.exp = c.now().Add(ttl)
	c.m[string(key)] = it
	return true
}

func (c *mapCache) ExpireIf(key []byte, ttl time.Duration, cond ExpireCond) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	if !ok {
		return false, nil
	}
	exp := c.now().Add(max(ttl, 0))
	never := it.exp.IsZero()
	switch {
	case cond&ExpireNX != 0 && !never, cond&ExpireXX != 0 && never,
		cond&ExpireGT != 0 && (never || !exp.After(it.exp)),
		cond&ExpireLT != 0 && !never && !exp.Before(it.exp):
		return false, nil
	}
	if ttl <= 0 {
		delete(c.m, string(key))
		return true, nil
	}
	it.exp = exp
	c.m[string(key)] = it
	return true, nil
}

func (c *mapCache) TTL(key []byte) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	if !ok {
		return 0, false
	}
	if it.exp.IsZero() {
		return -1, true
	}
	return it.exp.Sub(c.now()), true
}

func (c *mapCache) Persist(key []byte) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	if !ok || it.exp.IsZero() {
		return false, nil
	}
	it.exp = time.Time{}
	c.m[string(key)] = it
	return true, nil
}

func (c *mapCache) GetDel(dst, key []byte) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	if !ok {
		return dst, false, nil
	}
	if it.kind != tier.KindString {
		return dst, false, tier.ErrWrongKind
	}
	delete(c.m, string(key))
	return append(dst, it.v...), true, nil
}

func (c *mapCache) GetEx(dst, key []byte, x Expiry) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.live(string(key))
	if !ok {
		return dst, false, nil
	}
	if it.kind != tier.KindString {
		return dst, false, tier.ErrWrongKind
	}
	v := append(dst, it.v...)
	switch {
	case x.Persist:
		it.exp = time.Time{}
	case x.TTL > 0:
		it.exp = c.now().Add(x.TTL)
	case !x.At.IsZero():
		if !x.At.After(c.now()) {
			delete(c.m, string(key))
			return v, true, nil
		}
		it.exp = x.At
	}
	c.m[string(key)] = it
	return v, true, nil
}

func (c *mapCache) Keys() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Scan walks the keys in sorted order; the cursor is an index into them.
func (c *mapCache) Scan(cursor uint64, count int, match func(string, tier.Kind) bool) (uint64, [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []string
	for k := range c.m {
		if _, ok := c.live(k); ok {
			all = append(all, k)
		}
	}
	slices.Sort(all)
	var keys [][]byte
	i := int(min(cursor, uint64(len(all))))
	for ; i < len(all) && len(keys) < count; i++ {
		if match == nil || match(all[i], c.m[all[i]].kind) {
			keys = append(keys, []byte(all[i]))
		}
	}
	if i >= len(all) {
		return 0, keys
	}
	return uint64(i), keys
}

// Frequency answers 0 for every key: the map keeps no policy.
func (c *mapCache) Frequency(key []byte) (int, bool) {
	_, ok := c.KindOf(key)
	return 0, ok
}

func (c *mapCache) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = map[string]mapItem{}
	return nil
}

// WaitPurge returns at once: the map frees nothing in the background.
func (c *mapCache) WaitPurge(ctx context.Context) error { return nil }

func (c *mapCache) Where(key []byte) string {
	if c.Exists(key) > 0 {
		return "hot"
	}
	return ""
}

func (c *mapCache) Memory() tier.Memory { return tier.Memory{HotBytes: 1 << 20} }

func (c *mapCache) Stats() tier.Stats {
	c.mu.Lock()
	fail := c.coldFail
	c.mu.Unlock()
	st := tier.Stats{Keys: int64(c.Keys()), Tiers: []tier.TierLevel{{Name: "hot", Items: int64(c.Keys())}, {Name: "warm"}, {Name: "cold"}},
		WarmNode: -1, ColdBackend: "map"}
	if fail != "" {
		st.ColdWriteError = errors.New(fail)
	}
	return st
}

// startServer starts a Server for a map cache on a fresh short socket.
func startServer(t testing.TB, mod func(*Options)) (*Server, string) {
	t.Helper()
	return startServerWith(t, newMapCache(), mod)
}

// startServerWith is startServer over the caller's cache.
func startServerWith(t testing.TB, cache Cache, mod func(*Options)) (*Server, string) {
	t.Helper()
	o := Options{UnixSocket: shortSocket(t), ShutdownTimeout: 2 * time.Second}
	if mod != nil {
		mod(&o)
	}
	s, err := New(cache, o)
	if err != nil {
		t.Fatal(err)
	}
	startClosed(t, s)
	return s, o.UnixSocket
}

// startClosed starts s and closes it when the test ends.
func startClosed(t testing.TB, s *Server) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// rawConn is a connection speaking raw bytes.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	rd *testReplyReader
}

func dialRaw(t testing.TB, path string) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, nc: nc, rd: newTestReplyReader(nc)}
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := r.nc.Write([]byte(s)); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// cmd sends a command as a RESP array.
func (r *rawConn) cmd(args ...string) {
	r.t.Helper()
	s := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		s += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	r.send(s)
}

// reply reads one reply rendered as text (see testReplyReader).
func (r *rawConn) reply() string {
	r.t.Helper()
	s, err := r.rd.read()
	if err != nil {
		r.t.Fatalf("read reply: %v", err)
	}
	return s
}

// step is a command and the reply it must get (as testReplyReader renders it).
type step struct {
	args []string
	want string
}

// expect sends each step's command and checks its reply, reporting every
// mismatch.
func (r *rawConn) expect(steps []step) {
	r.t.Helper()
	for _, s := range steps {
		r.cmd(s.args...)
		if got := r.reply(); got != s.want {
			r.t.Errorf("%q: got %q, want %q", s.args, got, s.want)
		}
	}
}

// expectClosed asserts the server closed the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if s, err := r.rd.read(); err == nil {
		r.t.Fatalf("connection still open, got %q", s)
	}
}

// newTierCache opens a real tier.Cache of hot DRAM alone, for the tests of
// commands whose semantics live in the cache (kinds, read-modify-write).
func newTierCache(t testing.TB) *tier.Cache {
	t.Helper()
	c, err := tier.Open(tier.Options{HotBytes: 8 << 20, HotMaxValue: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
