package remote

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/remote/redistest"
)

// TestStoreOnACluster runs the store's behaviours on one real 3+3 cluster,
// each under its own prefix.
func TestStoreOnACluster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	addrs := c.Addrs()[:1] // one seed: the client learns the rest
	t.Run("MissIsNotAnError", func(t *testing.T) { testMissIsNotAnError(t, addrs) })
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, addrs) })
	t.Run("ForeignValueIsAMiss", func(t *testing.T) { testForeignValueIsAMiss(t, c, addrs) })
	t.Run("WatchSeesOtherWriters", func(t *testing.T) { testWatchSeesOtherWriters(t, addrs) })
	t.Run("ChunkedValueNeverMixes", func(t *testing.T) { testChunkedValueNeverMixes(t, addrs) })
	t.Run("ReplacedPiecesExpire", func(t *testing.T) { testReplacedPiecesExpire(t, c, addrs) })
	t.Run("ClearIsFleetWide", func(t *testing.T) { testClearIsFleetWide(t, c, addrs) })
	t.Run("KeySlotMatchesRedis", func(t *testing.T) { testKeySlotMatchesRedis(t, c) })
}

// testMissIsNotAnError checks backend B1 for the remote store.
func testMissIsNotAnError(t *testing.T, addrs []string) {
	s, _ := openStore(t, addrs, "t1:", nil)
	if _, _, ok := get(t, s, "absent"); ok {
		t.Fatal("absent key found")
	}
	for _, r := range s.GetMany(context.Background(), [][]byte{[]byte("a"), []byte("b{x}"), []byte("c{x}")}, nil, nil) {
		if r.Found || r.Err != nil {
			t.Fatalf("GetMany of absent keys: %+v", r)
		}
	}
	for _, err := range s.DeleteMany(context.Background(), [][]byte{[]byte("a"), []byte("b")}) {
		if err != nil {
			t.Fatalf("DeleteMany of absent keys: %v", err)
		}
	}
	for _, err := range s.RetimeMany(context.Background(), [][]byte{[]byte("a")}, []int64{time.Now().Add(time.Hour).UnixNano()}) {
		if err != nil {
			t.Fatalf("RetimeMany of an absent key: %v", err)
		}
	}
}

// testRoundTrip checks R2 and backend B2: values of every size (empty,
// inline, several pieces) come back with their flags and expiry, by Get
// and GetMany (keys of one slot and of many), after a retime, and a value
// past its expiry does not.
func testRoundTrip(t *testing.T, addrs []string) {
	s, _ := openStore(t, addrs, "t2:", func(c *Config) { c.ChunkBytes = 64 << 10 })
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond).UnixNano() // expiries are kept to the millisecond (PXAT)
	vals := map[string][]byte{"empty": {}, "small": []byte("v"), "inline": bytes.Repeat([]byte("i"), 60<<10),
		"chunked{t}": bytes.Repeat([]byte("c"), 300<<10+7), "also{t}": []byte("same slot as chunked{t}")}
	var keys [][]byte
	for k, v := range vals {
		put(t, s, k, v, exp, uint32(len(k)))
		keys = append(keys, []byte(k))
	}
	for k, v := range vals {
		got, m, ok := get(t, s, k)
		if !ok || !bytes.Equal(got, v) || m.Flags != uint32(len(k)) || m.Expiry != exp {
			t.Fatalf("%s: %d bytes, %+v, %v; want %d bytes, flags %d, expiry %d", k, len(got), m, ok, len(v), len(k), exp)
		}
	}
	for i, r := range s.GetMany(context.Background(), keys, nil, nil) {
		if !r.Found || !bytes.Equal(r.Value, vals[string(keys[i])]) {
			t.Fatalf("GetMany %s: found %v, err %v", keys[i], r.Found, r.Err)
		}
	}
	later := exp + int64(time.Hour)
	s.RetimeMany(context.Background(), [][]byte{[]byte("small"), []byte("chunked{t}")}, []int64{later, 0})
	if _, m, _ := get(t, s, "small"); m.Expiry != later {
		t.Fatalf("retimed expiry %d, want %d", m.Expiry, later)
	}
	if v, m, ok := get(t, s, "chunked{t}"); !ok || m.Expiry != 0 || !bytes.Equal(v, vals["chunked{t}"]) {
		t.Fatalf("chunked value after PERSIST: %v, expiry %d", ok, m.Expiry)
	}
	put(t, s, "soon", []byte("x"), time.Now().Add(50*time.Millisecond).UnixNano(), 0)
	time.Sleep(100 * time.Millisecond)
	if _, _, ok := get(t, s, "soon"); ok {
		t.Fatal("a value past its expiry was found")
	}
}

// testForeignValueIsAMiss checks R2: bytes under the prefix that are not a
// record of ours (another program's string, a hash, a record with a bad
// CRC) read as misses, counted, never as values.
func testForeignValueIsAMiss(t *testing.T, c *redistest.Cluster, addrs []string) {
	s, _ := openStore(t, addrs, "t3:", nil)
	put(t, s, "good", []byte("value"), 0, 0)
	gen := s.gen.Load()
	bad := inlineRecord([]byte("value"), 0)
	bad[len(bad)-1] ^= 1
	for k, v := range map[string]string{"plain": "not ours", "short": "TCRM", "badcrc": string(bad)} {
		key := s.dataKey(gen, []byte(k))
		if _, err := c.MasterOf(int(KeySlot([]byte(key)))).Do("SET", key, v); err != nil {
			t.Fatal(err)
		}
	}
	hk := s.dataKey(gen, []byte("hash"))
	if _, err := c.MasterOf(int(KeySlot([]byte(hk)))).Do("HSET", hk, "f", "v"); err != nil {
		t.Fatal(err)
	}
	before := s.Stats().Remote.Foreign
	for _, k := range []string{"plain", "short", "badcrc", "hash"} {
		if v, _, ok := get(t, s, k); ok {
			t.Fatalf("foreign %s read as %q", k, v)
		}
	}
	if got := s.Stats().Remote.Foreign - before; got != 4 {
		t.Fatalf("%d foreign values counted, want 4", got)
	}
	if v, _, ok := get(t, s, "good"); !ok || string(v) != "value" {
		t.Fatal("our own value no longer reads")
	}
	put(t, s, "hash", []byte("ours now"), 0, 0) // a put replaces a foreign key of any type
	if v, _, ok := get(t, s, "hash"); !ok || string(v) != "ours now" {
		t.Fatalf("put over a foreign hash: %q %v", v, ok)
	}
}

// testWatchSeesOtherWriters checks R3: a store hears of another's put,
// retime and delete of a key it read, and of an overwrite of a key it
// wrote itself; it never hears of its own writes, nor of keys it neither
// read nor wrote.
func testWatchSeesOtherWriters(t *testing.T, addrs []string) {
	a, wa := openStore(t, addrs, "t4:", nil)
	b, wb := openStore(t, addrs, "t4:", nil)
	ctx := context.Background()
	hears := func(key string, n int, what string) {
		t.Helper()
		redistest.Eventually(t, time.Second, "b hears of "+what, func() bool { return wb.count(key) >= n })
	}
	put(t, a, "k1", []byte("v1"), 0, 0)
	get(t, b, "k1")
	put(t, a, "k1", []byte("v2"), 0, 0)
	hears("k1", 1, "a's overwrite of a key b read")
	get(t, b, "k1")
	a.RetimeMany(ctx, [][]byte{[]byte("k1")}, []int64{time.Now().Add(time.Hour).UnixNano()})
	hears("k1", 2, "a's retime")
	get(t, b, "k1")
	a.DeleteMany(ctx, [][]byte{[]byte("k1")})
	hears("k1", 3, "a's delete")
	put(t, b, "k2{z}", []byte("b's"), 0, 0)
	put(t, b, "k2{z}", []byte("b's again"), 0, 0) // its own overwrite: not heard
	put(t, a, "k2{z}", []byte("a's"), 0, 0)
	hears("k2{z}", 1, "a's overwrite of a key b wrote")
	put(t, a, "k3", []byte("v"), 0, 0) // nobody read it
	time.Sleep(100 * time.Millisecond)
	if n := wa.count("k1") + wa.count("k2{z}") + wa.count("k3"); n != 0 {
		t.Fatalf("a heard of its own writes %d times", n)
	}
	if wb.count("k2{z}") != 1 || wb.count("k3") != 0 {
		t.Fatalf("b heard of k2 %d times (want 1: its own writes are not heard), of k3 %d (want 0)", wb.count("k2{z}"), wb.count("k3"))
	}
	_, wo := openStore(t, addrs, "t4other:", nil)
	put(t, a, "k1", []byte("v"), 0, 0)
	time.Sleep(50 * time.Millisecond)
	if wo.count("k1") != 0 {
		t.Fatal("a store of another prefix heard of a write")
	}
}

// testChunkedValueNeverMixes checks R4: while a writer overwrites a key
// with two chunked values in turn and deletes it, readers see one of them
// whole or a miss, never a mix.
func testChunkedValueNeverMixes(t *testing.T, addrs []string) {
	w, _ := openStore(t, addrs, "t5:", func(c *Config) { c.ChunkBytes = 16 << 10 })
	r, _ := openStore(t, addrs, "t5:", func(c *Config) { c.ChunkBytes = 16 << 10 })
	v1, v2 := bytes.Repeat([]byte("1"), 200<<10), bytes.Repeat([]byte("2"), 150<<10+3)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			switch i % 5 {
			case 4:
				w.DeleteMany(context.Background(), [][]byte{[]byte("big")})
			case 0, 2:
				w.PutMany(context.Background(), []*flusher.Item{{Key: []byte("big"), Value: v1}})
			default:
				w.PutMany(context.Background(), []*flusher.Item{{Key: []byte("big"), Value: v2}})
			}
		}
	}()
	var seen [3]int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		v, _, ok, err := r.Get(context.Background(), nil, []byte("big"), -1)
		switch {
		case err != nil:
			t.Logf("read error: %v", err)
		case !ok:
			seen[0]++
		case bytes.Equal(v, v1):
			seen[1]++
		case bytes.Equal(v, v2):
			seen[2]++
		default:
			stop.Store(true)
			wg.Wait()
			t.Fatalf("read a mix: %d bytes", len(v))
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("misses %d, first value %d, second value %d, torn reads %d", seen[0], seen[1], seen[2], r.Stats().Remote.Torn)
	if seen[1] == 0 || seen[2] == 0 {
		t.Fatalf("the reader never saw both values: %v", seen)
	}
}

// testReplacedPiecesExpire checks R4's cleanup: the pieces of a chunked
// value that was replaced or deleted get an expiry of chunkGrace, and the
// pieces of the value that replaced it have none.
func testReplacedPiecesExpire(t *testing.T, c *redistest.Cluster, addrs []string) {
	s, _ := openStore(t, addrs, "t6:", func(c *Config) { c.ChunkBytes = 4096 })
	gen := s.gen.Load()
	put(t, s, "k", bytes.Repeat([]byte("a"), 3*4096), 0, 0)
	h1 := headerOf(t, c, s, gen, "k")
	put(t, s, "k", bytes.Repeat([]byte("b"), 2*4096+1), 0, 0)
	h2 := headerOf(t, c, s, gen, "k")
	ttl := func(h header, i uint32) string {
		k := s.chunkKey(gen, h.putID, i)
		v, err := c.MasterOf(int(KeySlot([]byte(k)))).Do("PTTL", k)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i := uint32(0); i < h1.chunks; i++ {
		if v := ttl(h1, i); v == "-1" || v == "-2" {
			t.Fatalf("a replaced piece has PTTL %s, want about %v", v, chunkGrace)
		}
	}
	for i := uint32(0); i < h2.chunks; i++ {
		if v := ttl(h2, i); v != "-1" {
			t.Fatalf("a live piece has PTTL %s, want -1 (none)", v)
		}
	}
	s.DeleteMany(context.Background(), [][]byte{[]byte("k")})
	for i := uint32(0); i < h2.chunks; i++ {
		if v := ttl(h2, i); v == "-1" || v == "-2" {
			t.Fatalf("a deleted value's piece has PTTL %s", v)
		}
	}
}

func headerOf(t *testing.T, c *redistest.Cluster, s *Store, gen uint64, key string) header {
	t.Helper()
	dk := s.dataKey(gen, []byte(key))
	v, err := c.MasterOf(int(KeySlot([]byte(dk)))).Do("GETRANGE", dk, "0", "63")
	if err != nil {
		t.Fatal(err)
	}
	h, ok := decodeHeader([]byte(v))
	if !ok {
		t.Fatalf("%s holds no header", key)
	}
	return h
}

// testClearIsFleetWide checks R6 and R3's "all": after a's Clear no store
// finds a key written before it, b's Watch hears "all", keys written after
// it are found, and the old keys are swept from the cluster.
func testClearIsFleetWide(t *testing.T, c *redistest.Cluster, addrs []string) {
	a, _ := openStore(t, addrs, "t7:", func(c *Config) { c.ChunkBytes = 4096 })
	b, wb := openStore(t, addrs, "t7:", nil)
	for i := 0; i < 50; i++ {
		put(t, a, fmt.Sprint("old", i), bytes.Repeat([]byte("x"), 10000), 0, 0)
	}
	if _, _, ok := get(t, b, "old7"); !ok {
		t.Fatal("b does not find a's key")
	}
	if err := a.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	put(t, a, "new", []byte("v"), 0, 0)
	redistest.Eventually(t, 2*time.Second, "b is told the store was cleared", func() bool { wb.mu.Lock(); defer wb.mu.Unlock(); return wb.cleared > 0 })
	for _, s := range []*Store{a, b} {
		if _, _, ok := get(t, s, "old7"); ok {
			t.Fatal("a key written before Clear was found after it")
		}
		if v, _, ok := get(t, s, "new"); !ok || string(v) != "v" {
			t.Fatal("a key written after Clear was not found")
		}
	}
	redistest.Eventually(t, 5*time.Second, "the old generation is swept", func() bool { return a.Stats().Remote.Swept >= 50*4 })
	n := 0
	for _, node := range c.Nodes {
		keys, _ := node.Do("DBSIZE")
		_ = keys
		n++
	}
}

// testKeySlotMatchesRedis checks KeySlot against CLUSTER KEYSLOT.
func testKeySlotMatchesRedis(t *testing.T, c *redistest.Cluster) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ {
		k := make([]byte, r.IntN(20))
		for j := range k {
			k[j] = "ab{}x:"[r.IntN(6)]
		}
		got, err := c.Nodes[0].Do("CLUSTER", "KEYSLOT", string(k))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint(KeySlot(k)); got != want {
			t.Fatalf("KEYSLOT %q: redis %s, ours %s", k, got, want)
		}
	}
}

// TestSlowRemoteIsAMiss checks R1 against a server that accepts
// connections and never answers: Open returns, reads miss within about
// the deadline, and timeouts are counted.
func TestSlowRemoteIsAMiss(t *testing.T) {
	addr := redistest.Silent(t)
	start := time.Now()
	s, _ := openStore(t, []string{addr}, "t8:", func(c *Config) { c.Timeout = 50 * time.Millisecond; c.DialTimeout = 100 * time.Millisecond })
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Open took %v against a silent server", d)
	}
	start = time.Now()
	v, _, ok, _ := s.Get(context.Background(), nil, []byte("k"), -1)
	if ok || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("Get against a silent server: %q %v after %v", v, ok, time.Since(start))
	}
	if s.Available() {
		t.Fatal("a silent server is available")
	}
}

// TestUnreachableAtStart checks R5: a store whose seed does not answer
// opens, says it is unavailable, misses at once, and connects by itself
// once the server is up.
func TestUnreachableAtStart(t *testing.T) {
	srv := redistest.StartServer(t)
	srv.Kill()
	s, _ := openStore(t, []string{srv.Addr}, "t9:", func(c *Config) { c.BreakerBackoff = 50 * time.Millisecond })
	if s.Available() {
		t.Fatal("available with no server")
	}
	start := time.Now()
	if _, _, ok, err := s.Get(context.Background(), nil, []byte("k"), -1); ok || err == nil || time.Since(start) > 10*time.Millisecond {
		t.Fatalf("Get while unavailable: %v %v after %v", ok, err, time.Since(start))
	}
	srv.Restart()
	redistest.Eventually(t, 5*time.Second, "the store connects once the server is up", s.Available)
	put(t, s, "k", []byte("v"), 0, 0)
	if v, _, ok := get(t, s, "k"); !ok || string(v) != "v" {
		t.Fatal("no round trip after connecting")
	}
}

// TestWrongPassword checks R5 for refused credentials: Open succeeds, the
// store stays unavailable and reads miss, and the log says the
// credentials were refused, not that the seeds are unreachable.
func TestWrongPassword(t *testing.T) {
	srv := redistest.StartServer(t, "--requirepass", "right")
	core, logs := observer.New(zap.WarnLevel)
	s, _ := openStore(t, []string{srv.Addr}, "t10:", func(c *Config) { c.Password = "wrong"; c.Logger = zap.New(core) })
	time.Sleep(200 * time.Millisecond)
	if s.Available() || s.Stats().Remote.Connected {
		t.Fatal("connected with a wrong password")
	}
	if n := logs.FilterMessageSnippet("refused the credentials").Len(); n != 1 {
		t.Errorf("%d start lines saying the credentials were refused, want 1: %v", n, logs.All())
	}
	ok, _ := openStore(t, []string{srv.Addr}, "t10:", func(c *Config) { c.Password = "right" })
	if !ok.Available() {
		t.Fatal("not connected with the right password")
	}
}

// TestBreakerOpensAndCloses checks R5: a server that stops answering opens
// the breaker (calls then make no round trip), and its return closes it.
func TestBreakerOpensAndCloses(t *testing.T) {
	srv := redistest.StartServer(t)
	s, _ := openStore(t, []string{srv.Addr}, "t11:", func(c *Config) {
		c.BreakerFailures, c.BreakerBackoff, c.Timeout = 2, 50*time.Millisecond, 50*time.Millisecond
	})
	put(t, s, "k", []byte("v"), 0, 0)
	srv.Kill()
	redistest.Eventually(t, 5*time.Second, "the breaker opens", func() bool {
		s.Get(context.Background(), nil, []byte("k"), -1)
		return s.Stats().Remote.Breaker != "closed"
	})
	skipped := s.Stats().Remote.Skipped
	s.Get(context.Background(), nil, []byte("k"), -1)
	if s.Stats().Remote.Skipped <= skipped && s.Stats().Remote.Breaker == "open" {
		t.Fatal("a call made a round trip while the breaker was open")
	}
	srv.Restart()
	redistest.Eventually(t, 10*time.Second, "the breaker closes once the server answers", func() bool { return s.Stats().Remote.Breaker == "closed" })
}

// TestResyncAfterLostConnection checks R3's "all" for a lost connection:
// when the server restarts (its connections close, pushes may be lost),
// Watch is told once the server answers again.
func TestResyncAfterLostConnection(t *testing.T) {
	srv := redistest.StartServer(t)
	s, w := openStore(t, []string{srv.Addr}, "t12:", nil)
	put(t, s, "k", []byte("v"), 0, 0)
	srv.Restart()
	redistest.Eventually(t, 10*time.Second, "Watch is told every key may have changed", func() bool { return w.all() > 0 })
	if !s.Available() {
		t.Fatal("not available after the restart")
	}
	_ = backend.Params{}
}

// TestClearAfterOwnClear checks R3's Cleared and R6 for a store that
// cleared before: its own INCR of the generation ended its tracking of the
// generation key on the server (a write drops every tracker of the key,
// NOLOOP only keeps the writer from hearing it), so it must read the key
// again to hear of another store's later Clear.
func TestClearAfterOwnClear(t *testing.T) {
	srv := redistest.StartServer(t)
	a, wa := openStore(t, []string{srv.Addr}, "t13:", nil)
	b, _ := openStore(t, []string{srv.Addr}, "t13:", nil)
	if err := a.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 2*time.Second, "b takes a's generation", func() bool { return b.Stats().Remote.Generation == a.Stats().Remote.Generation })
	put(t, a, "k", []byte("old"), 0, 0)
	if err := b.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 2*time.Second, "a is told b cleared the store", func() bool { wa.mu.Lock(); defer wa.mu.Unlock(); return wa.cleared > 0 })
	if g, want := a.Stats().Remote.Generation, b.Stats().Remote.Generation; g != want {
		t.Fatalf("a is at generation %d, b at %d", g, want)
	}
	if _, _, ok := get(t, a, "k"); ok {
		t.Fatal("a key written before b's Clear was found through a after it")
	}
}

// TestBigValueReadsWithinItsBound checks R1 for a chunked value: its
// pieces are read within the deadline plus 10 ns a byte, as they are
// written, so a value the store took reads back even when the bare
// deadline (1 ms here) could not move it. A read may still miss on a
// loaded machine: one of five must find it (under the bare deadline none
// can).
func TestBigValueReadsWithinItsBound(t *testing.T) {
	srv := redistest.StartServer(t)
	w, _ := openStore(t, []string{srv.Addr}, "t14:", func(c *Config) { c.Timeout = 10 * time.Second })
	r, _ := openStore(t, []string{srv.Addr}, "t14:", func(c *Config) { c.Timeout, c.BreakerFailures = time.Millisecond, 100 })
	v := bytes.Repeat([]byte("0123456789abcdef"), 32<<20/16)
	put(t, w, "big", v, 0, 0)
	for i := 0; i < 5; i++ {
		got, _, ok, err := r.Get(context.Background(), nil, []byte("big"), -1)
		if ok {
			mustEqual(t, "big", got, v)
			return
		}
		t.Logf("read %d missed: %v", i, err)
	}
	t.Fatalf("five reads of a 32 MiB value missed: %d timeouts", r.Stats().Remote.Timeouts)
}

// TestClearBesideResync checks R6 when a Clear runs while the health
// loop reloads the generation: the store ends at the generation the
// server holds, never an earlier one.
func TestClearBesideResync(t *testing.T) {
	srv := redistest.StartServer(t)
	s, _ := openStore(t, []string{srv.Addr}, "t15:", func(c *Config) { c.Health = 10 * time.Second })
	s.mu.RLock()
	c := s.client
	s.mu.RUnlock()
	for i := 0; i < 300; i++ {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); s.resyncNow(c) }()
		if err := s.Clear(context.Background()); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		v, err := srv.Do("GET", s.genKey())
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(s.gen.Load()); got != v {
			t.Fatalf("round %d: the store is at generation %s, the server at %s", i, got, v)
		}
	}
}

// TestReplacingBigValuesMovesHeadersOnly checks R1 for overwrites and
// deletes of big values: the store reads back only the old record's
// header (to find a chunked value's pieces), not the old value, so a
// batch of them is bounded by the bytes it writes; the server's own
// count of the bytes it sent says so.
func TestReplacingBigValuesMovesHeadersOnly(t *testing.T) {
	srv := redistest.StartServer(t)
	s, _ := openStore(t, []string{srv.Addr}, "t16:", nil)
	const n, size = 32, 1<<20 - HeaderBytes
	v := bytes.Repeat([]byte("x"), size)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprint("k", i))
		put(t, s, string(keys[i]), v, 0, 0)
	}
	sent := func() int { return sentBytes(t, srv) }
	items := make([]*flusher.Item, n/2)
	for i := range items {
		items[i] = &flusher.Item{Key: keys[i], Value: []byte("small")}
	}
	before := sent()
	if err := s.PutMany(context.Background(), items); err != nil {
		t.Fatalf("overwriting %d values of 1 MiB: %v", len(items), err)
	}
	if d := sent() - before; d > n*HeaderBytes*4 {
		t.Fatalf("overwriting %d values of 1 MiB read %d bytes back", len(items), d)
	}
	before = sent()
	for i, err := range s.DeleteMany(context.Background(), keys[n/2:]) {
		if err != nil {
			t.Fatalf("delete %d of a value of 1 MiB: %v", i, err)
		}
	}
	if d := sent() - before; d > n*HeaderBytes*4 {
		t.Fatalf("deleting %d values of 1 MiB read %d bytes back", n/2, d)
	}
	for _, k := range keys[n/2:] {
		if _, _, ok := get(t, s, string(k)); ok {
			t.Fatalf("%s found after its delete", k)
		}
	}
}

// sentBytes is the bytes srv has sent to its clients.
func sentBytes(t *testing.T, srv *redistest.Server) int {
	t.Helper()
	n, err := srv.SentBytes()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHasManyReadsNoValues checks R2 for HasMany (EXISTS): it finds live
// values, inline and chunked, and not absent, expired or foreign ones,
// reading their headers alone.
func TestHasManyReadsNoValues(t *testing.T) {
	srv := redistest.StartServer(t)
	s, _ := openStore(t, []string{srv.Addr}, "t17:", func(c *Config) { c.ChunkBytes = 64 << 10 })
	put(t, s, "inline", bytes.Repeat([]byte("i"), 60<<10), 0, 0)
	put(t, s, "chunked", bytes.Repeat([]byte("c"), 8<<20), 0, 0)
	put(t, s, "empty", nil, 0, 0)
	put(t, s, "expiring", []byte("v"), time.Now().Add(50*time.Millisecond).UnixNano(), 0)
	dp := fmt.Sprintf("t17:d%d:", s.Stats().Remote.Generation)
	if _, err := srv.Do("SET", dp+"foreign", "not a record"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Do("RPUSH", dp+"list", "x"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	want := map[string]bool{"inline": true, "chunked": true, "empty": true, "expiring": false, "foreign": false, "list": false, "absent": false}
	var keys [][]byte
	for k := range want {
		keys = append(keys, []byte(k))
	}
	before := sentBytes(t, srv)
	has, errs := s.HasMany(context.Background(), keys)
	if d := sentBytes(t, srv) - before; d > len(keys)*HeaderBytes*4 {
		t.Fatalf("HasMany of %d keys read %d bytes", len(keys), d)
	}
	for i, k := range keys {
		if errs[i] != nil || has[i] != want[string(k)] {
			t.Errorf("HasMany: %s: %v %v, want %v", k, has[i], errs[i], want[string(k)])
		}
	}
}
