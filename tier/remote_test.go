package tier

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/remote/redistest"
)

// remoteOptions are small local tiers (memory only unless cold is set)
// on the remote tier at addrs under prefix, on the wall clock (the
// remote's expiries are the server's).
func remoteOptions(addrs []string, prefix string, edit func(*Options)) Options {
	o := smallOptions(newFakeClock())
	o.Clock = nil
	o.MaxValue = 8 << 20
	o.WarmBytes, o.WarmSegmentBytes = 4<<20, 512<<10
	rc := remote.Config{Addrs: addrs, Prefix: prefix, Timeout: 500 * time.Millisecond, ChunkBytes: 256 << 10}
	o.OpenRemote = func(p backend.Params) (backend.Shared, error) { return remote.Open(rc, p) }
	if edit != nil {
		edit(&o)
	}
	return o
}

// sidecars opens n caches sharing the remote tier at addrs under prefix.
func sidecars(t *testing.T, n int, addrs []string, prefix string, edit func(*Options)) []*Cache {
	t.Helper()
	var cs []*Cache
	for i := 0; i < n; i++ {
		cs = append(cs, openWith(t, remoteOptions(addrs, prefix, edit)))
	}
	return cs
}

// settleRemote waits until c's changes are all written to the remote.
func settleRemote(t *testing.T, c *Cache) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.Stats().Remote.Queue.Queued+c.Stats().Remote.Queue.InFlight > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the remote queue did not drain: %+v", c.Stats().Remote.Queue)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// coherent waits until every cache reads key as want (nil: absent) and
// returns how long it took; it fails past bound.
func coherent(t *testing.T, cs []*Cache, key string, want []byte, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok := true
		for i, c := range cs {
			v, found, err := c.Get(nil, []byte(key))
			if err != nil {
				t.Fatalf("cache %d: Get %s: %v", i, key, err)
			}
			if found != (want != nil) || found && !bytes.Equal(v, want) {
				ok = false
				if time.Since(start) > bound {
					t.Fatalf("cache %d reads %s as %q (%v) %v after the change, want %q", i, key, v, found, time.Since(start), want)
				}
				break
			}
		}
		if ok {
			return time.Since(start)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRemoteTier runs the remote tier's behaviours on one real 3+3 Redis
// Cluster, each under a prefix of its own.
func TestRemoteTier(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	addrs := cl.Addrs()[:1]
	t.Run("ReadThroughWriteBehind", func(t *testing.T) { testRemoteReadThrough(t, addrs) })
	t.Run("Model", func(t *testing.T) { testRemoteModel(t, addrs) })
	t.Run("ChunkedAcrossSidecars", func(t *testing.T) { testRemoteChunked(t, addrs) })
	t.Run("WriteThrough", func(t *testing.T) { testRemoteWriteThrough(t, addrs) })
	t.Run("FlushAllIsFleetWide", func(t *testing.T) { testRemoteFlushAll(t, addrs) })
	t.Run("ConditionalWritesSeeTheRemote", func(t *testing.T) { testRemoteConditional(t, addrs) })
	t.Run("ResyncAtStart", func(t *testing.T) { testRemoteResyncAtStart(t, addrs) })
	t.Run("LostInvalidationsRevalidate", func(t *testing.T) { testRemoteRevalidate(t, addrs) })
	t.Run("LiveAggregates", func(t *testing.T) { testRemoteLive(t, addrs) })
}

// testRemoteLive checks T44 with T38-T39: a live aggregate changed in
// place through one sidecar reaches the remote as its record (a lazy put,
// behind W6) and is read, and changed in turn, through another.
func testRemoteLive(t *testing.T, addrs []string) {
	cs := sidecars(t, 2, addrs, "live:", nil)
	k := []byte("chat")
	var items [][]byte
	for i := range 100 {
		v := []byte(fmt.Sprint("message ", i))
		if err := editPush(cs[0], k, v); err != nil {
			t.Fatal(err)
		}
		items = append(items, v)
	}
	settleRemote(t, cs[0])
	agree := func(want []byte) {
		t.Helper()
		deadline := time.Now().Add(time.Second)
		for i, c := range cs {
			for {
				rec, ok, err := readRecord(c, k)
				if err == nil && ok && bytes.Equal(rec, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("sidecar %d reads %d bytes (%v, %v), want %d", i, len(rec), ok, err, len(want))
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	agree(testRecord(items...))
	if _, _, err := editPop(cs[1], k); err != nil {
		t.Fatal(err)
	}
	settleRemote(t, cs[1])
	agree(testRecord(items[1:]...))
}

// testRemoteReadThrough checks T38 and T40: a key written through one
// sidecar is read through another, counted as a remote hit, and admitted
// there by the promotion policy (a second read); a key deleted through one
// is gone for the other.
func testRemoteReadThrough(t *testing.T, addrs []string) {
	cs := sidecars(t, 2, addrs, "rt1:", nil)
	a, b := cs[0], cs[1]
	if _, err := a.Set([]byte("k"), []byte("computed once"), SetOptions{TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	settleRemote(t, a)
	for i := 0; i < 3; i++ {
		v, ok, err := b.Get(nil, []byte("k"))
		if err != nil || !ok || string(v) != "computed once" {
			t.Fatalf("read %d through b: %q %v %v", i, v, ok, err)
		}
	}
	st := b.Stats().Remote
	if st.Hits < 1 || st.Admitted != 1 {
		t.Fatalf("b: %d remote hits, %d admitted; want at least 1 and 1", st.Hits, st.Admitted)
	}
	if w := b.Where([]byte("k")); w != "hot" && w != "warm" {
		t.Fatalf("b holds the admitted key in %q", w)
	}
	if ttl, ok := b.TTL([]byte("k")); !ok || ttl <= 59*time.Minute {
		t.Fatalf("b's copy has TTL %v %v, want about an hour", ttl, ok)
	}
	if _, err := a.Set([]byte("only-remote"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	settleRemote(t, a)
	if w := b.Where([]byte("only-remote")); w != "remote" {
		t.Fatalf("Where of a key only the remote holds: %q", w)
	}
	if n, err := a.Delete([]byte("k")); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	coherent(t, cs, "k", nil, time.Second)
	if n := b.Exists([]byte("only-remote"), []byte("k")); n != 1 {
		t.Fatalf("Exists counts %d, want 1 (the key only the remote holds)", n)
	}
}

// testRemoteModel checks T38, T39 and the coherence bound: random SETs,
// overwrites, DELs, EXPIREs, INCRs and reads through three sidecars,
// against a map; after each change every sidecar reads the model's value
// within a second (the documented bound).
func testRemoteModel(t *testing.T, addrs []string) {
	cs := sidecars(t, 3, addrs, "rt2:", nil)
	r := rand.New(rand.NewPCG(7, 8))
	model := map[string][]byte{}
	var worst time.Duration
	steps := 300
	if testing.Short() {
		steps = 80
	}
	for step := 0; step < steps; step++ {
		c := cs[r.IntN(len(cs))]
		k := fmt.Sprint("key", r.IntN(12))
		// Reads on every sidecar first, so that they hold copies the
		// change must invalidate.
		for _, o := range cs {
			o.Get(nil, []byte(k))
		}
		switch op := r.IntN(10); {
		case op < 4:
			v := []byte(fmt.Sprintf("v%d-%s", step, bytes.Repeat([]byte("x"), r.IntN(3000))))
			if _, err := c.Set([]byte(k), v, SetOptions{}); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		case op < 6:
			if _, err := c.Delete([]byte(k)); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
		case op < 7:
			if _, ok := model[k]; ok {
				if ok, err := c.ExpireIf([]byte(k), time.Hour, 0); !ok || err != nil {
					t.Fatalf("step %d: EXPIRE of %s (in the model): %v %v", step, k, ok, err)
				}
			}
		case op < 8:
			if _, ok := model[k]; !ok || isInt(model[k]) {
				err := c.Update([]byte(k), func(cur Current) (Change, error) {
					n, _ := strconv.Atoi(string(cur.Value))
					return Change{Op: Store, Value: []byte(strconv.Itoa(n + 1)), Kind: KindString}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				n, _ := strconv.Atoi(string(model[k]))
				model[k] = []byte(strconv.Itoa(n + 1))
			}
		default:
			if _, _, _, err := c.SetGet(nil, []byte(k), []byte("sg"), SetOptions{}); err != nil {
				t.Fatal(err)
			}
			model[k] = []byte("sg")
		}
		settleRemote(t, c)
		if d := coherent(t, cs, k, model[k], time.Second); d > worst {
			worst = d
		}
	}
	t.Logf("%d changes; the slowest became visible on every sidecar in %v", steps, worst)
}

func isInt(b []byte) bool { _, err := strconv.Atoi(string(b)); return err == nil }

// testRemoteChunked checks that a value larger than the remote's chunk
// size written through one sidecar reads whole through another, and an
// overwrite of it too.
func testRemoteChunked(t *testing.T, addrs []string) {
	cs := sidecars(t, 2, addrs, "rt3:", func(o *Options) { o.WarmBytes, o.WarmSegmentBytes = 16<<20, 4<<20 })
	big := bytes.Repeat([]byte("0123456789"), 300_000) // 3 MB: 12 pieces of 256 KiB
	if _, err := cs[0].Set([]byte("big"), big, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	settleRemote(t, cs[0])
	coherent(t, cs, "big", big, time.Second)
	big2 := bytes.Repeat([]byte("z"), 1_000_001)
	if _, err := cs[1].Set([]byte("big"), big2, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	settleRemote(t, cs[1])
	coherent(t, cs, "big", big2, time.Second)
}

// testRemoteWriteThrough checks T38's write-through: once Set returns,
// another sidecar reads the value at once.
func testRemoteWriteThrough(t *testing.T, addrs []string) {
	cs := sidecars(t, 2, addrs, "rt4:", func(o *Options) { o.Remote.WriteThrough, o.Remote.Wait = true, 2*time.Second })
	for i := 0; i < 50; i++ {
		k, v := fmt.Sprint("wt", i), []byte(fmt.Sprint("value", i))
		if _, err := cs[0].Set([]byte(k), v, SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, ok, _ := cs[1].Get(nil, []byte(k)); !ok || !bytes.Equal(got, v) {
			t.Fatalf("write-through: %s reads %q %v on the other sidecar right after Set returned; a %+v; b %+v", k, got, ok, cs[0].Stats().Remote, cs[1].Stats().Remote)
		}
	}
	if n := cs[0].Stats().Remote.WaitTimeouts; n != 0 {
		t.Fatalf("%d write-through waits timed out", n)
	}
}

// testRemoteFlushAll checks T41: FLUSHALL through one sidecar empties the
// remote and every sidecar's local copies.
func testRemoteFlushAll(t *testing.T, addrs []string) {
	cs := sidecars(t, 2, addrs, "rt5:", nil)
	for i := 0; i < 20; i++ {
		cs[0].Set([]byte(fmt.Sprint("f", i)), []byte("v"), SetOptions{})
	}
	settleRemote(t, cs[0])
	for i := 0; i < 20; i++ { // b holds local copies (read twice: admitted)
		cs[1].Get(nil, []byte(fmt.Sprint("f", i)))
		cs[1].Get(nil, []byte(fmt.Sprint("f", i)))
	}
	if err := cs[0].Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		coherent(t, cs, fmt.Sprint("f", i), nil, 2*time.Second)
	}
	cs[0].Set([]byte("after"), []byte("v"), SetOptions{})
	settleRemote(t, cs[0])
	coherent(t, cs, "after", []byte("v"), time.Second)
}

// testRemoteConditional checks T40's ensureRemote: SET NX, INCR, GETDEL,
// EXPIRE and TTL through a sidecar that never saw a key decide on the
// remote's value.
func testRemoteConditional(t *testing.T, addrs []string) {
	cs := sidecars(t, 2, addrs, "rt6:", nil)
	a, b := cs[0], cs[1]
	a.Set([]byte("lock"), []byte("owner-a"), SetOptions{TTL: time.Minute})
	a.Set([]byte("n"), []byte("41"), SetOptions{})
	a.Set([]byte("gd"), []byte("once"), SetOptions{})
	settleRemote(t, a)
	if stored, err := b.Set([]byte("lock"), []byte("owner-b"), SetOptions{NX: true}); stored || err != nil {
		t.Fatalf("SET NX through b of a key a holds: stored %v %v", stored, err)
	}
	if ttl, ok := b.TTL([]byte("lock")); !ok || ttl <= 0 {
		t.Fatalf("TTL through b: %v %v", ttl, ok)
	}
	err := b.Update([]byte("n"), func(cur Current) (Change, error) {
		n, _ := strconv.Atoi(string(cur.Value))
		return Change{Op: Store, Value: []byte(strconv.Itoa(n + 1)), Kind: KindString}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	settleRemote(t, b)
	coherent(t, cs, "n", []byte("42"), time.Second)
	if v, ok, err := b.GetDel(nil, []byte("gd")); !ok || string(v) != "once" || err != nil {
		t.Fatalf("GETDEL through b: %q %v %v", v, ok, err)
	}
	settleRemote(t, b)
	coherent(t, cs, "gd", nil, time.Second)
}

// testRemoteResyncAtStart checks T42: a sidecar restarted on its cold
// store of an earlier run does not serve that store's copies of keys
// another sidecar changed meanwhile.
func testRemoteResyncAtStart(t *testing.T, addrs []string) {
	dir := t.TempDir()
	edit := func(o *Options) { o.Durability = DurabilityDrain; emuCold(o, dir) }
	needURing(t)
	a := openWith(t, remoteOptions(addrs, "rt7:", edit))
	a.Set([]byte("k"), []byte("old"), SetOptions{})
	settleRemote(t, a)
	if err := a.Close(); err != nil { // drain: "old" is in a's cold store
		t.Fatal(err)
	}
	b := openWith(t, remoteOptions(addrs, "rt7:", nil))
	b.Set([]byte("k"), []byte("new"), SetOptions{})
	settleRemote(t, b)
	a2 := openWith(t, remoteOptions(addrs, "rt7:", edit))
	if v, ok, _ := a2.Get(nil, []byte("k")); !ok || string(v) != "new" {
		t.Fatalf("restarted over its earlier run's store: k reads %q %v, want the value b wrote meanwhile", v, ok)
	}
	if st := a2.Stats().Remote; st.Replaced != 1 {
		t.Fatalf("the earlier run's copy was not replaced: %+v", st)
	}
}

// testRemoteRevalidate checks T42 for lost invalidations: a's copies are
// checked at their next use after a resync: an unchanged one stays (no
// DRAM write), a changed one is replaced, a deleted one dropped; while
// the remote is unusable the local copy is served.
func testRemoteRevalidate(t *testing.T, addrs []string) {
	cs := sidecars(t, 2, addrs, "rt8:", nil)
	a, b := cs[0], cs[1]
	for _, k := range []string{"same", "changed", "deleted"} {
		a.Set([]byte(k), []byte("v1"), SetOptions{})
	}
	settleRemote(t, a)
	a.rt.s.Watch(func(backend.Change) {}) // a hears nothing from now on: its invalidations are lost
	b.Set([]byte("changed"), []byte("v2"), SetOptions{})
	b.Delete([]byte("deleted"))
	settleRemote(t, b)
	if v, _, _ := a.Get(nil, []byte("changed")); string(v) != "v1" {
		t.Fatalf("before the resync a reads %q (its invalidations were cut off: want its stale v1)", v)
	}
	a.resyncLocal()
	for k, want := range map[string]string{"same": "v1", "changed": "v2", "deleted": ""} {
		v, ok, err := a.Get(nil, []byte(k))
		if err != nil || ok != (want != "") || string(v) != want {
			t.Fatalf("after the resync a reads %s as %q %v %v, want %q", k, v, ok, err, want)
		}
	}
	if st := a.Stats().Remote; st.Validated != 1 || st.Replaced != 1 || st.Dropped != 1 {
		t.Fatalf("checks after the resync: %d validated, %d replaced, %d dropped; want 1 each", st.Validated, st.Replaced, st.Dropped)
	}
	if v, _, _ := a.Get(nil, []byte("same")); string(v) != "v1" || a.Stats().Remote.Validated != 1 {
		t.Fatal("a copy checked once is checked again")
	}
}

// heldStore is the real remote store whose PutMany, once armed, returns
// only when released: a batch whose other changes are still on their way
// (one key's transaction answered, the batch not yet).
type heldStore struct {
	backend.Shared
	arm     atomic.Bool
	release chan struct{}
}

// wrap makes o's remote store h around the real one.
func (h *heldStore) wrap(o *Options) {
	open := o.OpenRemote
	o.OpenRemote = func(p backend.Params) (backend.Shared, error) {
		s, err := open(p)
		h.Shared = s
		return h, err
	}
}

func (h *heldStore) PutMany(ctx context.Context, items []*flusher.Item) error {
	err := h.Shared.PutMany(ctx, items)
	if h.arm.Load() {
		<-h.release
	}
	return err
}

// TestRemoteInvalidationWhileInFlight checks T39 for a change heard while
// this sidecar's own change of the key is in flight: the other sidecar's
// write landed after ours (its invalidation came after our answer), so it
// decides, and our local copy is dropped once our batch is answered.
func TestRemoteInvalidationWhileInFlight(t *testing.T) {
	heardWhileOwnChange(t, "inflight:", nil)
}

// TestRemoteInvalidationWhileRetimeQueued checks T39 for a change heard
// while only a new expiry of the key made here is queued: the expiry
// carries no value, so it does not decide the key's value, and the other
// sidecar's value replaces the local copy.
func TestRemoteInvalidationWhileRetimeQueued(t *testing.T) {
	heardWhileOwnChange(t, "retimeq:", func(a *Cache) {
		if !a.Expire([]byte("k"), time.Hour) { // queued behind the put in flight
			t.Fatal("EXPIRE of a key a holds")
		}
	})
}

// heardWhileOwnChange has sidecar a put k=v1, answered by the remote but
// its batch held in flight, then calls also (nil: nothing), then has b put
// k=v2, which a hears of; once a's batch is answered both read v2.
func heardWhileOwnChange(t *testing.T, prefix string, also func(a *Cache)) {
	srv := redistest.StartServer(t)
	held := &heldStore{release: make(chan struct{})}
	a := openWith(t, remoteOptions([]string{srv.Addr}, prefix, held.wrap))
	var once sync.Once
	release := func() { once.Do(func() { held.arm.Store(false); close(held.release) }) }
	t.Cleanup(release) // before a's Close (cleanups run last first): a failed check does not hang it
	b := openWith(t, remoteOptions([]string{srv.Addr}, prefix, nil))
	k := []byte("k")
	if _, err := a.Set(k, []byte("v0"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	settleRemote(t, a)
	held.arm.Store(true)
	if _, err := a.Set(k, []byte("v1"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !remoteHolds(t, srv, prefix, "k", "v1") {
		if time.Now().After(deadline) {
			t.Fatal("a's v1 did not reach the remote")
		}
		time.Sleep(time.Millisecond)
	}
	if also != nil {
		also(a)
	}
	heard := a.Stats().Remote.Store.Invalidations
	if _, err := b.Set(k, []byte("v2"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	settleRemote(t, b)
	for a.Stats().Remote.Store.Invalidations == heard {
		if time.Now().After(deadline) {
			t.Fatal("a did not hear of b's write")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a's remote goroutine handles the invalidation
	release()
	settleRemote(t, a)
	coherent(t, []*Cache{a, b}, "k", []byte("v2"), time.Second)
}

// TestRemoteWriteThroughMSetWaitsOnce checks T38's bound for a call of
// many keys: an MSET waits for the remote at most Wait in all (one wait,
// counted once), not Wait for each pair.
func TestRemoteWriteThroughMSetWaitsOnce(t *testing.T) {
	srv := redistest.StartServer(t)
	held := &heldStore{release: make(chan struct{})}
	defer func() { held.arm.Store(false); close(held.release) }()
	const wait = 50 * time.Millisecond
	a := openWith(t, remoteOptions([]string{srv.Addr}, "msetwait:", func(o *Options) {
		o.Remote.WriteThrough, o.Remote.Wait = true, wait
		held.wrap(o)
	}))
	held.arm.Store(true) // no batch is answered: every wait runs out
	kvs := make([][2][]byte, 5)
	for i := range kvs {
		kvs[i] = [2][]byte{[]byte(fmt.Sprint("k", i)), []byte("v")}
	}
	start := time.Now()
	if err := a.MSet(kvs); err != nil {
		t.Fatal(err)
	}
	if n := a.Stats().Remote.WaitTimeouts; n != 1 {
		t.Fatalf("MSET of %d pairs waited %v and gave up %d times; want once", len(kvs), time.Since(start), n)
	}
}

// TestRemoteExistsReadsNoValue checks T40's EXISTS: a key only the remote
// holds is counted from its header alone, its value (chunked here) not
// read, and not admitted.
func TestRemoteExistsReadsNoValue(t *testing.T) {
	srv := redistest.StartServer(t)
	cs := sidecars(t, 2, []string{srv.Addr}, "exists:", func(o *Options) { o.WarmBytes, o.WarmSegmentBytes = 16<<20, 4<<20 })
	a, b := cs[0], cs[1]
	if _, err := a.Set([]byte("big"), bytes.Repeat([]byte("b"), 2<<20), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	settleRemote(t, a)
	before, err := srv.SentBytes()
	if err != nil {
		t.Fatal(err)
	}
	if n := b.Exists([]byte("big"), []byte("absent")); n != 1 {
		t.Fatalf("Exists counts %d, want 1", n)
	}
	after, err := srv.SentBytes()
	if err != nil {
		t.Fatal(err)
	}
	if after-before > 64<<10 {
		t.Fatalf("EXISTS of a 2 MiB key only the remote holds read %d bytes from it", after-before)
	}
	if w := b.Where([]byte("big")); w != "remote" {
		t.Fatalf("after EXISTS b holds the key in %q", w)
	}
}

// TestRemoteWriteThroughUnavailableWaitsNot checks T38 with the remote
// unavailable (its breaker open, nothing sent, behind W4): a write-through
// call does not wait for an answer that cannot come; the wait is counted
// as given up.
func TestRemoteWriteThroughUnavailableWaitsNot(t *testing.T) {
	rc := remote.Config{Addrs: []string{redistest.Silent(t)}, Prefix: "unavail:", Timeout: 20 * time.Millisecond, DialTimeout: 50 * time.Millisecond}
	o := remoteOptions(nil, "", func(o *Options) {
		o.Remote.WriteThrough, o.Remote.Wait = true, 2*time.Second
		o.Remote.Queue.CloseWait = 10 * time.Millisecond // at Close: nothing will be sent
	})
	o.OpenRemote = func(p backend.Params) (backend.Shared, error) { return remote.Open(rc, p) }
	a := openWith(t, o)
	start := time.Now()
	if _, err := a.Set([]byte("k"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= time.Second {
		t.Fatalf("a write-through Set waited %v for a remote that is unavailable", d)
	}
	if n := a.Stats().Remote.WaitTimeouts; n != 1 {
		t.Fatalf("%d waits given up, want 1", n)
	}
	if v, ok, _ := a.Get(nil, []byte("k")); !ok || string(v) != "v" {
		t.Fatalf("the local copy: %q %v", v, ok)
	}
}

// remoteHolds reports whether the server at srv holds want as key's
// record under prefix (generation 1).
func remoteHolds(t *testing.T, srv *redistest.Server, prefix, key, want string) bool {
	t.Helper()
	gen, err := srv.Do("GET", prefix+"g")
	if err != nil {
		return false
	}
	v, err := srv.Do("GET", prefix+"d"+gen+":"+key)
	if err != nil {
		return false
	}
	return strings.HasSuffix(v, want)
}
