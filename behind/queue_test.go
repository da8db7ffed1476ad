package behind

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
)

// memShared is a backend.Shared in a map that records the order of the
// changes it took, and can be made unavailable, slow or failing. The
// queue's behaviour against a real cluster is tested through the tier
// (tier TestRemote*) and the sidecar (cmd/tiercache TestShared*).
type memShared struct {
	mu      sync.Mutex
	m       map[string]string
	exp     map[string]int64
	log     []string // "put k v", "del k", "exp k n"
	down    atomic.Bool
	fail    atomic.Bool
	delay   time.Duration
	active  atomic.Int32 // calls running now
	overlap atomic.Bool  // two calls ran on one key at once
	busy    sync.Map
}

func newMem() *memShared { return &memShared{m: map[string]string{}, exp: map[string]int64{}} }

func (s *memShared) enter(keys ...string) func() {
	for _, k := range keys {
		if _, dup := s.busy.LoadOrStore(k, true); dup {
			s.overlap.Store(true)
		}
	}
	time.Sleep(s.delay)
	return func() {
		for _, k := range keys {
			s.busy.Delete(k)
		}
	}
}

func (s *memShared) PutMany(_ context.Context, items []*flusher.Item) error {
	var keys []string
	for _, it := range items {
		keys = append(keys, string(it.Key))
	}
	defer s.enter(keys...)()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		if s.fail.Load() {
			it.Err = fmt.Errorf("failing")
			continue
		}
		s.m[string(it.Key)], s.exp[string(it.Key)] = string(it.Value), it.Expiry
		s.log = append(s.log, fmt.Sprintf("put %s %s", it.Key, it.Value))
	}
	return nil
}
func (s *memShared) Delete(ctx context.Context, key []byte) error {
	return s.DeleteMany(ctx, [][]byte{key})[0]
}
func (s *memShared) DeleteMany(_ context.Context, keys [][]byte) []error {
	var ks []string
	for _, k := range keys {
		ks = append(ks, string(k))
	}
	defer s.enter(ks...)()
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := make([]error, len(keys))
	for i, k := range keys {
		if s.fail.Load() {
			errs[i] = fmt.Errorf("failing")
			continue
		}
		delete(s.m, string(k))
		s.log = append(s.log, "del "+string(k))
	}
	return errs
}
func (s *memShared) RetimeMany(_ context.Context, keys [][]byte, exps []int64) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		s.exp[string(k)] = exps[i]
		s.log = append(s.log, fmt.Sprintf("exp %s %d", k, exps[i]))
	}
	return make([]error, len(keys))
}
func (s *memShared) HasMany(_ context.Context, keys [][]byte) ([]bool, []error) {
	return make([]bool, len(keys)), make([]error, len(keys))
}
func (s *memShared) Get(context.Context, []byte, []byte, int) ([]byte, backend.Meta, bool, error) {
	return nil, backend.Meta{}, false, nil
}
func (s *memShared) GetMany(_ context.Context, keys [][]byte, _ []int, _ [][]byte) []backend.Result {
	return make([]backend.Result, len(keys))
}
func (s *memShared) Stats() backend.Stats        { return backend.Stats{} }
func (s *memShared) Close() error                { return nil }
func (s *memShared) Watch(func(backend.Change))  {}
func (s *memShared) Clear(context.Context) error { return nil }
func (s *memShared) Available() bool             { return !s.down.Load() }
func (s *memShared) get(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok
}

func waitIdle(t *testing.T, q *Queue, keys ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, k := range keys {
		if !q.Wait(ctx, []byte(k)) {
			t.Fatalf("%s still pending", k)
		}
	}
}

// TestCoalescesAndBounds checks W1.
func TestCoalescesAndBounds(t *testing.T) {
	s := newMem()
	s.down.Store(true) // nothing is sent: changes pile up
	q := New(Options{Store: s, QueueItems: 3})
	defer q.Close()
	q.Put([]byte("a"), []byte("1"), 0, 0)
	q.Put([]byte("a"), []byte("2"), 0, 0)
	q.Retime([]byte("a"), 77)
	q.Put([]byte("b"), []byte("x"), 0, 0)
	q.Delete([]byte("b"))
	q.Put([]byte("c"), []byte("y"), 0, 0)
	st := q.Stats()
	if st.Queued != 3 || st.Merged != 3 || st.Dropped != 0 {
		t.Fatalf("after 6 changes of 3 keys: %+v; want 3 queued, 3 merged", st)
	}
	q.Put([]byte("d"), []byte("z"), 0, 0) // the queue is full: a's change, the oldest, goes
	if st := q.Stats(); st.Queued != 3 || st.Dropped != 1 || q.Pending([]byte("a")) {
		t.Fatalf("past QueueItems: %+v, a pending %v; want a dropped", st, q.Pending([]byte("a")))
	}
	s.down.Store(false)
	waitIdle(t, q, "b", "c", "d")
	if _, ok := s.get("b"); ok {
		t.Fatal("b's delete, the newest change, lost to its put")
	}
	if v, _ := s.get("c"); v != "y" {
		t.Fatalf("c = %q", v)
	}
	sb := newMem()
	qb := New(Options{Store: sb, QueueBytes: 100})
	defer qb.Close()
	sb.down.Store(true)
	qb.Put([]byte("k1"), make([]byte, 60), 0, 0)
	qb.Put([]byte("k2"), make([]byte, 60), 0, 0)
	if st := qb.Stats(); st.Queued != 1 || st.Dropped != 1 {
		t.Fatalf("past QueueBytes: %+v", st)
	}
	// A merge that grows a change keeps it (it is the key's newest state).
	s2 := newMem()
	s2.down.Store(true)
	q2 := New(Options{Store: s2})
	defer q2.Close()
	q2.Put([]byte("m"), []byte("v"), 5, 0)
	q2.Retime([]byte("m"), 9)
	s2.down.Store(false)
	waitIdle(t, q2, "m")
	if s2.exp["m"] != 9 {
		t.Fatalf("a retime merged into a put: expiry %d, want 9", s2.exp["m"])
	}
}

// TestOrderPerKey checks W2: with a slow store and many writers of few
// keys, no two changes of a key are in flight at once, and each key ends
// at the value written last.
func TestOrderPerKey(t *testing.T) {
	s := newMem()
	s.delay = 2 * time.Millisecond
	q := New(Options{Store: s, BatchItems: 4, InFlight: 4})
	defer q.Close()
	var wg sync.WaitGroup
	last := make([]string, 4)
	var mu sync.Mutex
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := fmt.Sprint("k", i%4)
				v := fmt.Sprint(g, "-", i)
				mu.Lock() // the order of the calls is the order of the writes
				q.Put([]byte(k), []byte(v), 0, 0)
				last[i%4] = v
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	waitIdle(t, q, "k0", "k1", "k2", "k3")
	if s.overlap.Load() {
		t.Fatal("two changes of one key were in flight at once")
	}
	for i, want := range last {
		if v, _ := s.get(fmt.Sprint("k", i)); v != want {
			t.Fatalf("k%d = %q, want the last write %q", i, v, want)
		}
	}
}

// TestPendingAndWait checks W3.
func TestPendingAndWait(t *testing.T) {
	s := newMem()
	s.down.Store(true)
	q := New(Options{Store: s})
	defer q.Close()
	q.Put([]byte("k"), []byte("v"), 0, 0)
	q.Retime([]byte("r"), 1)
	if !q.Pending([]byte("k")) || q.Pending([]byte("other")) || !q.QueuedValue([]byte("k")) || q.QueuedValue([]byte("other")) ||
		!q.Pending([]byte("r")) || q.QueuedValue([]byte("r")) {
		t.Fatal("Pending or QueuedValue is wrong")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if q.Wait(ctx, []byte("k")) {
		t.Fatal("Wait returned true while the store was down")
	}
	s.down.Store(false)
	waitIdle(t, q, "k")
	if q.Pending([]byte("k")) || q.QueuedValue([]byte("k")) {
		t.Fatal("pending after the store took it")
	}
}

// TestWaitsWhileUnavailable checks W4: nothing is sent while the store is
// unavailable; failures are counted once given up (W7: Retries -1 gives
// up at the first).
func TestWaitsWhileUnavailable(t *testing.T) {
	s := newMem()
	s.down.Store(true)
	q := New(Options{Store: s, Retries: -1})
	defer q.Close()
	for i := 0; i < 10; i++ {
		q.Put([]byte(fmt.Sprint(i)), []byte("v"), 0, 0)
	}
	time.Sleep(30 * time.Millisecond)
	if len(s.log) != 0 || q.Stats().Batches != 0 {
		t.Fatal("sent while unavailable")
	}
	s.fail.Store(true)
	s.down.Store(false)
	for i := 0; i < 10; i++ {
		waitIdle(t, q, fmt.Sprint(i))
	}
	if st := q.Stats(); st.Failed != 10 || st.Sent != 0 || st.Queued != 0 {
		t.Fatalf("a failing store: %+v; want 10 failed, none queued", st)
	}
}

// TestCloseSendsPending checks W5.
func TestCloseSendsPending(t *testing.T) {
	s := newMem()
	q := New(Options{Store: s, BatchDelay: time.Hour, BatchItems: 1000})
	for i := 0; i < 50; i++ {
		q.Put([]byte(fmt.Sprint(i)), []byte("v"), 0, 0)
	}
	q.Close()
	if st := q.Stats(); st.Sent != 50 || st.Queued != 0 {
		t.Fatalf("after Close: %+v; want all 50 sent", st)
	}
	q.Put([]byte("late"), []byte("v"), 0, 0)
	if st := q.Stats(); st.Dropped != 1 {
		t.Fatalf("a change after Close: %+v; want it dropped", st)
	}
	s2 := newMem()
	s2.down.Store(true)
	q2 := New(Options{Store: s2, CloseWait: 50 * time.Millisecond})
	q2.Put([]byte("k"), []byte("v"), 0, 0)
	start := time.Now()
	q2.Close()
	if d := time.Since(start); d > time.Second || q2.Stats().Dropped != 1 {
		t.Fatalf("Close with the store down took %v, stats %+v", d, q2.Stats())
	}
}

// TestLazyPutSendsTheValueAtSend checks W6: a lazy put sends what its Fill
// gives when it is sent, changed after the call too; one whose Fill finds
// nothing sends nothing; a plain put or a delete of the key replaces a
// pending lazy one.
func TestLazyPutSendsTheValueAtSend(t *testing.T) {
	s := newMem()
	s.down.Store(true) // nothing goes until the values below are set
	q := New(Options{Store: s})
	defer q.Close()
	var mu sync.Mutex
	vals := map[string]string{"a": "v1", "b": "w1"}
	fill := func(dst, key []byte) ([]byte, int64, uint32, bool) {
		mu.Lock()
		defer mu.Unlock()
		v, ok := vals[string(key)]
		return append(dst, v...), 7, 3, ok
	}
	q.PutLazy([]byte("a"), fill)
	q.PutLazy([]byte("b"), fill)
	q.PutLazy([]byte("c"), fill) // Fill finds nothing
	q.PutLazy([]byte("d"), fill)
	q.Put([]byte("d"), []byte("plain"), 0, 0) // replaces the lazy put
	mu.Lock()
	vals["a"] = "v2" // changed after the call: the send takes v2
	mu.Unlock()
	s.down.Store(false)
	q.wake()
	waitIdle(t, q, "a", "b", "c", "d")
	for k, want := range map[string]string{"a": "v2", "b": "w1", "d": "plain"} {
		if v, _ := s.get(k); v != want {
			t.Fatalf("%s = %q, want %q", k, v, want)
		}
	}
	if _, ok := s.get("c"); ok {
		t.Fatal("a lazy put whose Fill found nothing was sent")
	}
	s.mu.Lock()
	exp := s.exp["a"]
	s.mu.Unlock()
	if exp != 7 {
		t.Fatalf("a's expiry %d, want Fill's 7", exp)
	}
}

// TestRetriesFailedChanges checks W7: changes the store failed are sent
// again once it takes them (a failover's writes land on the new master),
// in order with the changes made meanwhile: a put or delete made since
// decides, a new expiry made since keeps the failed change's value; a
// change failed Retries+1 times is given up, counted; one in flight at a
// Reset is not retried.
func TestRetriesFailedChanges(t *testing.T) {
	s := newMem()
	q := New(Options{Store: s, RetryBackoff: time.Millisecond, Retries: 1000})
	defer q.Close()
	q.Put([]byte("pre"), []byte("old"), 0, 0)
	q.Put([]byte("gone"), []byte("old"), 0, 0)
	waitIdle(t, q, "pre", "gone")
	s.fail.Store(true)
	q.Put([]byte("a"), []byte("v1"), 0, 0)
	q.Delete([]byte("gone"))
	q.Put([]byte("pre"), []byte("new"), 0, 0)
	for q.Stats().Retried < 3 {
		time.Sleep(time.Millisecond)
	}
	q.Retime([]byte("pre"), 42) // a new expiry of a put the store failed
	q.Put([]byte("a"), []byte("v2"), 0, 0)
	s.fail.Store(false)
	waitIdle(t, q, "a", "gone", "pre")
	for k, want := range map[string]string{"a": "v2", "gone": "", "pre": "new"} {
		if v, _ := s.get(k); v != want {
			t.Fatalf("%s: the store holds %q, want %q", k, v, want)
		}
	}
	s.mu.Lock()
	pexp := s.exp["pre"]
	s.mu.Unlock()
	if pexp != 42 {
		t.Fatalf("pre: expiry %d, want 42", pexp)
	}
	st := q.Stats()
	if st.Failed != 0 || st.Queued != 0 {
		t.Fatalf("after the store came back: %+v", st)
	}
	retried := st.Retried

	s.fail.Store(true)
	s.delay = 20 * time.Millisecond
	q.Put([]byte("moot"), []byte("v"), 0, 0)
	for q.Stats().InFlight == 0 {
		time.Sleep(time.Millisecond)
	}
	q.Reset() // a FLUSHALL while the put is in flight: it is not retried
	waitIdle(t, q, "moot")
	s.fail.Store(false)
	s.delay = 0
	if _, ok := s.get("moot"); ok || q.Stats().Retried != retried {
		t.Fatal("a change made before a Reset was retried after it")
	}

	g := New(Options{Store: s, RetryBackoff: time.Millisecond, Retries: 2})
	defer g.Close()
	s.fail.Store(true)
	g.Put([]byte("b"), []byte("v"), 0, 0)
	waitIdle(t, g, "b")
	if st := g.Stats(); st.Failed != 1 || st.Retried != 2 {
		t.Fatalf("a change the store always fails: %d failed, %d retried; want 1 and 2", st.Failed, st.Retried)
	}
}
