package flusher

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// recStore records what reaches it, in order; gate (if set) blocks PutMany
// until closed, to hold batches in flight.
type recStore struct {
	mu      sync.Mutex
	log     []string // "put k v" / "del k"
	batches [][]string
	inPut   map[string]bool
	overlap atomic.Bool
	gate    chan struct{}
	fail    atomic.Bool
	failDel atomic.Bool
}

func newRecStore() *recStore { return &recStore{inPut: map[string]bool{}} }

func (s *recStore) PutMany(ctx context.Context, items []*Item) error {
	s.mu.Lock()
	var b []string
	for _, it := range items {
		if s.inPut[string(it.Key)] {
			s.overlap.Store(true)
		}
		s.inPut[string(it.Key)] = true
		b = append(b, string(it.Key))
	}
	s.batches = append(s.batches, b)
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for _, it := range items {
		delete(s.inPut, string(it.Key))
		if s.fail.Load() {
			it.Err = errors.New("recstore: injected failure")
			first = it.Err
			continue
		}
		s.log = append(s.log, fmt.Sprintf("put %s %s", it.Key, it.Value))
	}
	return first
}

func (s *recStore) Delete(ctx context.Context, key []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failDel.Load() {
		return errors.New("recstore: injected delete failure")
	}
	s.log = append(s.log, "del "+string(key))
	return nil
}

func newFlusher(t *testing.T, o Options) *Flusher {
	t.Helper()
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func item(k, v string) *Item { return &Item{Key: []byte(k), Value: []byte(v)} }

func TestBatchClosesByCount(t *testing.T) {
	s := newRecStore()
	f := newFlusher(t, Options{Store: s, BatchItems: 4, BatchDelay: time.Hour})
	for i := 0; i < 8; i++ {
		if err := f.Enqueue(item(fmt.Sprint("k", i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, b := range s.batches {
		if len(b) > 4 {
			t.Fatalf("batch of %d items, limit 4", len(b))
		}
	}
	if st := f.Stats(); st.Written != 8 || st.Batches < 2 {
		t.Fatalf("stats %+v, want 8 written in >= 2 batches", st)
	}
}

func TestBatchClosesByBytes(t *testing.T) {
	s := newRecStore()
	f := newFlusher(t, Options{Store: s, BatchItems: 100, BatchBytes: 100, BatchDelay: time.Hour})
	for i := 0; i < 10; i++ {
		f.Enqueue(item(fmt.Sprint("k", i), string(make([]byte, 60))))
	}
	f.Drain(context.Background())
	for _, b := range s.batches {
		if len(b) > 2 {
			t.Fatalf("batch of %d items of 62 bytes, byte limit 100", len(b))
		}
	}
}

func TestBatchClosesByTime(t *testing.T) {
	s := newRecStore()
	f := newFlusher(t, Options{Store: s, BatchItems: 100, BatchDelay: time.Millisecond})
	f.Enqueue(item("a", "1"))
	// No Drain: only the delay can close this batch. Wait for it (bounded).
	for i := 0; i < 5000 && f.Stats().Written == 0; i++ {
		time.Sleep(time.Millisecond)
	}
	if f.Stats().Written != 1 {
		t.Fatal("a lone item was never written: the batch did not close by time")
	}
}

// stuckStore is a recStore whose puts wait until its gate is closed (at
// the test's end, if the test did not).
func stuckStore(t *testing.T) *recStore {
	s := newRecStore()
	s.gate = make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-s.gate:
		default:
			close(s.gate)
		}
	})
	return s
}

// holdFirst enqueues an item "first" and returns once its batch is in
// flight, held by a stuck store's gate.
func holdFirst(f *Flusher) {
	f.Enqueue(item("first", "x"))
	for f.Stats().InFlight == 0 {
		time.Sleep(time.Millisecond)
	}
}

// TestFullQueueDropsOldestNeverBlocks checks F2 in Shed mode.
func TestFullQueueDropsOldestNeverBlocks(t *testing.T) {
	s := stuckStore(t)
	var dropped []string
	var mu sync.Mutex
	f := newFlusher(t, Options{Store: s, QueueItems: 4, BatchItems: 1, InFlight: 1, BatchDelay: time.Microsecond, Overload: Shed,
		OnDrop: func(it *Item, why Reason) {
			mu.Lock()
			dropped = append(dropped, string(it.Key))
			mu.Unlock()
		}})
	holdFirst(f)
	for i := 0; i < 10; i++ {
		f.Enqueue(item(fmt.Sprint("k", i), "v")) // must not block although the store is stuck
	}
	if err := f.Enqueue(&Item{Key: []byte("del"), Delete: true}); err != nil {
		t.Fatal(err)
	}
	st := f.Stats()
	if st.Drops != 6 || st.Queue != 5 {
		t.Fatalf("after 10 puts into a queue of 4 (+1 delete): drops %d queue %d, want 6 and 5", st.Drops, st.Queue)
	}
	close(s.gate)
	f.Drain(context.Background())
	f.Close()
	mu.Lock()
	defer mu.Unlock()
	want := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	if fmt.Sprint(dropped) != fmt.Sprint(want) {
		t.Fatalf("dropped %v, want the oldest %v", dropped, want)
	}
}

// TestBackpressureKeepsEverything checks F2 in Backpressure mode (the
// default): a full queue, a store that takes nothing, and an item larger
// than QueueBytes: Enqueue neither blocks nor drops, counts the overflow,
// and every item reaches the store once it takes them.
func TestBackpressureKeepsEverything(t *testing.T) {
	s := stuckStore(t)
	var drops atomic.Int64
	f := newFlusher(t, Options{Store: s, QueueItems: 4, QueueBytes: 64, BatchItems: 1, InFlight: 1, BatchDelay: time.Microsecond,
		OnDrop: func(*Item, Reason) { drops.Add(1) }})
	holdFirst(f)
	for i := 0; i < 10; i++ {
		if err := f.Enqueue(item(fmt.Sprint("k", i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Enqueue(item("big", strings.Repeat("b", 100))); err != nil {
		t.Fatalf("an item above QueueBytes: %v, want it queued", err)
	}
	st := f.Stats()
	if st.Drops != 0 || st.Queue != 11 || st.Overflow < 7 {
		t.Fatalf("after 11 puts into a queue of 4: drops %d, queue %d, overflow %d; want 0, 11, at least 7", st.Drops, st.Queue, st.Overflow)
	}
	close(s.gate)
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Written != 12 || drops.Load() != 0 {
		t.Fatalf("written %d, dropped %d; want all 12 written", st.Written, drops.Load())
	}
}

func TestSameKeyInOrderNeverOverlapping(t *testing.T) {
	s := newRecStore()
	f := newFlusher(t, Options{Store: s, BatchItems: 3, InFlight: 4, BatchDelay: time.Microsecond, QueueItems: 1 << 20})
	for i := 0; i < 300; i++ {
		k := fmt.Sprint("k", i%5)
		if i%7 == 0 {
			f.Enqueue(&Item{Key: []byte(k), Delete: true})
		} else {
			f.Enqueue(item(k, fmt.Sprint(i)))
		}
	}
	f.Close()
	if s.overlap.Load() {
		t.Fatal("two writes of one key were in flight at once")
	}
	// Replay: per key, the log must list the operations in enqueue order.
	per := map[string][]string{}
	for _, l := range s.log {
		var op, k, v string
		fmt.Sscan(l, &op, &k, &v)
		per[k] = append(per[k], op+v)
	}
	for k := 0; k < 5; k++ {
		var want []string
		for i := k; i < 300; i += 5 {
			if i%7 == 0 {
				want = append(want, "del")
			} else {
				want = append(want, fmt.Sprint("put", i))
			}
		}
		if got := per[fmt.Sprint("k", k)]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("key k%d reached the store as %v, want %v", k, got, want)
		}
	}
}

func TestSupersededIsSkipped(t *testing.T) {
	s := newRecStore()
	f := newFlusher(t, Options{Store: s, Current: func(it *Item) bool { return it.Version == 2 }})
	f.Enqueue(&Item{Key: []byte("a"), Value: []byte("old"), Version: 1})
	f.Enqueue(&Item{Key: []byte("b"), Value: []byte("new"), Version: 2})
	f.Close()
	if fmt.Sprint(s.log) != "[put b new]" || f.Stats().Superseded != 1 {
		t.Fatalf("log %v stats %+v", s.log, f.Stats())
	}
}

func TestErrorsCountedAndWaitReportsThem(t *testing.T) {
	s := newRecStore()
	s.fail.Store(true)
	var done atomic.Int64
	f := newFlusher(t, Options{Store: s, OnDone: func(it *Item, err error) {
		if err != nil {
			done.Add(1)
		}
	}})
	if err := f.Wait(context.Background(), item("w", "x")); err == nil {
		t.Fatal("Wait returned nil for a failed write")
	}
	f.Enqueue(item("a", "x"))
	f.Drain(context.Background())
	if st := f.Stats(); st.Errors != 2 || done.Load() != 2 {
		t.Fatalf("errors %d, OnDone errors %d, want 2 and 2", st.Errors, done.Load())
	}
	s.fail.Store(false)
	if err := f.Wait(context.Background(), item("w", "y")); err != nil {
		t.Fatalf("the flusher did not recover: %v", err)
	}
}

type admitNone struct{}

func (admitNone) Admit(uint64, int) bool { return false }

func TestAdmissionRejectsButNotSync(t *testing.T) {
	s := newRecStore()
	f := newFlusher(t, Options{Store: s, Admit: admitNone{}})
	if err := f.Enqueue(item("a", "x")); !errors.Is(err, ErrRejected) {
		t.Fatalf("Enqueue = %v, want ErrRejected", err)
	}
	if err := f.Wait(context.Background(), item("s", "x")); err != nil {
		t.Fatalf("a Sync item was refused: %v", err)
	}
	if st := f.Stats(); st.Rejected != 1 || st.Written != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCloseDrainsAndIsIdempotent(t *testing.T) {
	s := newRecStore()
	f := newFlusher(t, Options{Store: s, BatchDelay: time.Hour, BatchItems: 1000})
	for i := 0; i < 100; i++ {
		f.Enqueue(item(fmt.Sprint("k", i), "v"))
	}
	f.Close()
	f.Close()
	if len(s.log) != 100 {
		t.Fatalf("Close wrote %d of 100 pending items", len(s.log))
	}
	if err := f.Enqueue(item("late", "v")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Enqueue after Close = %v", err)
	}
}

func TestOptionsValidateReportsEverything(t *testing.T) {
	o := Options{QueueItems: -1, BatchItems: 5000, InFlight: 100}
	o.EnsureDefaults()
	err := o.Validate()
	for _, want := range []string{"Store", "QueueItems", "BatchItems", "InFlight"} {
		if err == nil || !contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
}

// TestValidateTuningWithoutStore (F15): the tuning a configuration sets is
// checked without a Store, every problem at once, and valid tuning passes.
func TestValidateTuningWithoutStore(t *testing.T) {
	o := Options{QueueItems: -1, BatchItems: 5000, InFlight: 100, BatchDelay: -time.Millisecond}
	o.EnsureDefaults()
	err := o.ValidateTuning()
	for _, want := range []string{"QueueItems", "BatchItems", "InFlight", "BatchDelay"} {
		if err == nil || !contains(err.Error(), want) {
			t.Errorf("ValidateTuning() = %v, want it to name %s", err, want)
		}
	}
	if err != nil && contains(err.Error(), "Store") {
		t.Errorf("ValidateTuning() = %v, names Store", err)
	}
	ok := Options{QueueBytes: 8 << 20}
	ok.EnsureDefaults()
	if err := ok.ValidateTuning(); err != nil {
		t.Errorf("defaults: ValidateTuning() = %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestErrorsLoggedSparingly (F6): a store failing every write gets every
// failure counted but one warning, not one per item; after errLogEvery the
// next failure is logged with how many failed in between.
func TestErrorsLoggedSparingly(t *testing.T) {
	s := newRecStore()
	s.fail.Store(true)
	core, logs := observer.New(zapcore.WarnLevel)
	f := newFlusher(t, Options{Store: s, Logger: zap.New(core)})
	for i := 0; i < 500; i++ {
		f.Enqueue(item(fmt.Sprintf("k%d", i), "v"))
	}
	f.Drain(context.Background())
	if st := f.Stats(); st.Errors != 500 {
		t.Fatalf("errors %d, want 500", st.Errors)
	}
	if n := logs.FilterMessage("flusher: cold write failed").Len(); n != 1 {
		t.Fatalf("500 failures within a second logged %d warnings, want 1", n)
	}

	var l errLog
	log, lines := observer.New(zapcore.WarnLevel)
	it := &Item{Key: []byte("k"), Err: errors.New("EIO")}
	t0 := time.Unix(1000, 0)
	for i := 0; i < 5; i++ {
		l.failed(zap.New(log), it, t0.Add(time.Duration(i)*time.Second))
	}
	l.failed(zap.New(log), it, t0.Add(errLogEvery))
	all := lines.All()
	if len(all) != 2 {
		t.Fatalf("6 failures over %v logged %d lines, want 2", errLogEvery, len(all))
	}
	if n := all[1].ContextMap()["failed_since_last_report"]; n != int64(4) {
		t.Fatalf("the second line reports %v failures in between, want 4", n)
	}
}

// TestDeletePending (F8): DeletePending is true from a delete's Enqueue
// until the store completed it, also while it waits behind a put of the
// same key in flight, and false once it is done.
func TestDeletePending(t *testing.T) {
	s := newRecStore()
	s.gate = make(chan struct{})
	var pendingInOnDone atomic.Bool
	var f *Flusher
	f = newFlusher(t, Options{Store: s, BatchItems: 1, BatchDelay: time.Millisecond, OnDone: func(it *Item, err error) {
		if it.Delete {
			pendingInOnDone.Store(f.DeletePending(it.Key))
		}
	}})
	if err := f.Enqueue(item("k", "v")); err != nil {
		t.Fatal(err)
	}
	for { // the put is in flight, held at the gate
		s.mu.Lock()
		n := len(s.batches)
		s.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if f.DeletePending([]byte("k")) {
		t.Fatal("DeletePending before any delete was enqueued")
	}
	if err := f.Enqueue(&Item{Key: []byte("k"), Delete: true}); err != nil {
		t.Fatal(err)
	}
	if !f.DeletePending([]byte("k")) || f.DeletePending([]byte("other")) {
		t.Fatalf("DeletePending k %v (want true), other %v (want false)", f.DeletePending([]byte("k")), f.DeletePending([]byte("other")))
	}
	close(s.gate)
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.DeletePending([]byte("k")) {
		t.Fatal("DeletePending after the delete completed")
	}
	if !pendingInOnDone.Load() {
		t.Fatal("DeletePending was false in the delete's OnDone")
	}
	s.mu.Lock()
	if len(s.log) != 2 || s.log[1] != "del k" {
		t.Fatalf("store saw %q, want the put then the delete", s.log)
	}
	s.mu.Unlock()
	// A delete the store failed leaves the copy there: it stays pending.
	s.failDel.Store(true)
	if err := f.Enqueue(&Item{Key: []byte("f"), Delete: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !f.DeletePending([]byte("f")) {
		t.Fatal("DeletePending false after the store failed the delete")
	}
	// A failed Sync delete's waiter is told, and keeps the key as it was:
	// its copy is no longer being deleted.
	if err := f.Wait(context.Background(), &Item{Key: []byte("s"), Delete: true}); err == nil {
		t.Fatal("a Sync delete the store failed returned nil")
	}
	if f.DeletePending([]byte("s")) {
		t.Fatal("DeletePending true after the store failed a Sync delete, whose waiter keeps the key")
	}
}

// manyDelStore is a recStore that also deletes in batches (ManyDeleter);
// delGate (if set) blocks DeleteMany until closed.
type manyDelStore struct {
	*recStore
	calls   [][]string
	delGate chan struct{}
}

func (s *manyDelStore) DeleteMany(ctx context.Context, keys [][]byte) []error {
	if s.delGate != nil {
		<-s.delGate
	}
	s.mu.Lock()
	var b []string
	for _, k := range keys {
		b = append(b, string(k))
	}
	s.calls = append(s.calls, b)
	s.mu.Unlock()
	errs := make([]error, len(keys))
	for i, k := range keys {
		if string(k) == "bad" {
			errs[i] = errors.New("manydel: injected failure")
			continue
		}
		errs[i] = s.recStore.Delete(ctx, k)
	}
	return errs
}

// TestDeletesBatched: a batch's deletes reach a ManyDeleter store in one
// call, each item gets its own outcome, and the puts of the batch follow.
func TestDeletesBatched(t *testing.T) {
	s := &manyDelStore{recStore: newRecStore()}
	var failed []string
	var mu sync.Mutex
	f := newFlusher(t, Options{Store: s, BatchItems: 64, BatchDelay: time.Hour,
		OnDone: func(it *Item, err error) {
			if err != nil {
				mu.Lock()
				failed = append(failed, string(it.Key))
				mu.Unlock()
			}
		}})
	var keys []string
	for i := 0; i < 20; i++ {
		keys = append(keys, fmt.Sprint("d", i))
		if err := f.Enqueue(&Item{Key: []byte(keys[i]), Delete: true}); err != nil {
			t.Fatal(err)
		}
	}
	f.Enqueue(&Item{Key: []byte("bad"), Delete: true})
	f.Enqueue(item("p", "v"))
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := fmt.Sprint([][]string{append(keys, "bad")})
	if got := fmt.Sprint(s.calls); got != want {
		t.Errorf("DeleteMany calls %s, want one with every delete %s", got, want)
	}
	if st := f.Stats(); st.DeleteCalls != 1 || st.Errors != 1 || st.Written != 21 {
		t.Errorf("stats %+v: want 1 delete call, 1 error, 21 written", st)
	}
	if fmt.Sprint(failed) != "[bad]" {
		t.Errorf("failed items %v, want [bad]", failed)
	}
	if !slices.Contains(s.log, "put p v") {
		t.Errorf("the store never got the batch's put: %v", s.log)
	}
}

// TestDropOrderModel: Enqueue into a full queue always drops the oldest
// droppable item (never a delete or a Sync item), also after many deletes
// at the queue's head and across compactions, against a list model. The
// dispatcher is not running: batches are taken by hand.
func TestDropOrderModel(t *testing.T) {
	o := Options{Store: newRecStore(), QueueItems: 300, BatchItems: 7, Overload: Shed}
	o.EnsureDefaults()
	f := &Flusher{o: o, inflight: map[uint64]struct{}{}, seed: maphash.MakeSeed(), dels: map[string]int{}}
	var model []*Item // pending, oldest first
	rng := rand.New(rand.NewPCG(3, 4))
	drops := 0
	for op := 0; op < 60000; op++ {
		switch r := rng.IntN(100); {
		case r < 3: // the dispatcher takes a batch and completes it
			f.mu.Lock()
			batch := f.takeLocked(nil)
			for _, it := range batch {
				delete(f.inflight, it.kh)
			}
			f.batches--
			f.mu.Unlock()
			for _, it := range batch {
				i := slices.Index(model, it)
				if i < 0 {
					t.Fatalf("op %d: took %s, not pending in the model", op, it.Key)
				}
				model = slices.Delete(model, i, i+1)
			}
		default:
			it := &Item{Key: []byte(fmt.Sprint("k", op)), Value: []byte("v"), Delete: r < 40, Sync: r >= 40 && r < 42}
			if err := f.Enqueue(it); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			victims := f.victims
			f.victims = nil
			f.mu.Unlock()
			for _, v := range victims {
				i := slices.IndexFunc(model, func(m *Item) bool { return !m.Delete && !m.Sync })
				if i < 0 || model[i] != v {
					t.Fatalf("op %d: dropped %s, want the oldest droppable item", op, v.Key)
				}
				model = slices.Delete(model, i, i+1)
				drops++
			}
			model = append(model, it)
		}
		if f.n != len(model) {
			t.Fatalf("op %d: %d pending, model %d", op, f.n, len(model))
		}
	}
	if drops < 1000 {
		t.Fatalf("only %d drops: the test does not exercise a full queue", drops)
	}
}

// BenchmarkEnqueueBehindDeletes: Enqueue of a put into a full queue whose
// oldest 16,000 items are deletes (a burst of overwrites of keys cold
// holds, the store behind): each Enqueue drops the oldest put.
func BenchmarkEnqueueBehindDeletes(b *testing.B) {
	o := Options{Store: newRecStore(), QueueItems: 16384, Overload: Shed}
	o.EnsureDefaults()
	f := &Flusher{o: o, inflight: map[uint64]struct{}{}, seed: maphash.MakeSeed(), dels: map[string]int{}}
	for i := 0; i < o.QueueItems; i++ {
		f.Enqueue(&Item{Key: []byte(fmt.Sprint("k", i)), Value: []byte("v"), Delete: i < 16000})
	}
	items := make([]*Item, b.N)
	for i := range items {
		items[i] = item(fmt.Sprint("p", i), "v")
	}
	b.ResetTimer()
	for _, it := range items {
		f.Enqueue(it)
		f.victims = f.victims[:0]
	}
	b.StopTimer()
	if st := f.Stats(); st.Drops != uint64(b.N) {
		b.Fatalf("%d drops, want %d", st.Drops, b.N)
	}
}

// TestDeletesBesidePuts: a batch's puts reach the store while its deletes
// are still running (they are of other keys, F3), and Drain waits for both.
func TestDeletesBesidePuts(t *testing.T) {
	s := &manyDelStore{recStore: newRecStore(), delGate: make(chan struct{})}
	f := newFlusher(t, Options{Store: s, BatchItems: 3, BatchDelay: time.Hour})
	f.Enqueue(&Item{Key: []byte("d0"), Delete: true})
	f.Enqueue(&Item{Key: []byte("d1"), Delete: true})
	f.Enqueue(item("p", "v")) // the third item closes the batch
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		put := slices.Contains(s.log, "put p v")
		s.mu.Unlock()
		if put {
			break
		}
		if time.Now().After(deadline) {
			close(s.delGate)
			t.Fatal("the batch's put waited for its deletes")
		}
		time.Sleep(time.Millisecond)
	}
	drained := make(chan error, 1)
	go func() { drained <- f.Drain(context.Background()) }()
	select {
	case err := <-drained:
		t.Fatalf("Drain returned (%v) while the batch's deletes were still running", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(s.delGate)
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Written != 3 || st.Errors != 0 {
		t.Errorf("stats %+v: want 3 written, no error", st)
	}
}

// TestReleaseOncePerItem: OnRelease gets every item Enqueue accepted
// exactly once, after its OnDone or OnDrop (written, deleted, superseded
// or shed), and never an item someone awaits (Wait).
func TestReleaseOncePerItem(t *testing.T) {
	var mu sync.Mutex
	ended := map[*Item]bool{}
	released := map[*Item]int{}
	end := func(it *Item) {
		mu.Lock()
		ended[it] = true
		mu.Unlock()
	}
	f := newFlusher(t, Options{Store: newRecStore(), QueueItems: 24, BatchItems: 3, InFlight: 1, BatchDelay: time.Microsecond, Overload: Shed,
		Current: func(it *Item) bool { return string(it.Value) != "old" },
		OnDone:  func(it *Item, err error) { end(it) },
		OnDrop:  func(it *Item, why Reason) { end(it) },
		OnRelease: func(it *Item) {
			mu.Lock()
			defer mu.Unlock()
			if !ended[it] {
				t.Errorf("%s released before its OnDone or OnDrop", it.Key)
			}
			released[it]++
		}})
	var accepted []*Item
	for i := range 200 {
		it := item(fmt.Sprint("k", i%50), "v")
		switch i % 4 {
		case 1:
			it.Value = []byte("old") // superseded
		case 2:
			it.Delete, it.Value = true, nil
		}
		if err := f.Enqueue(it); err != nil {
			t.Fatal(err)
		}
		accepted = append(accepted, it)
		if i < 100 && i%8 == 7 { // the first half in small batches (superseded), the rest at once (shed)
			f.Drain(context.Background())
		}
	}
	waited := item("w", "v")
	if err := f.Wait(context.Background(), waited); err != nil {
		t.Fatal(err)
	}
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, it := range accepted {
		if released[it] != 1 {
			t.Errorf("%s (delete %v, value %q) released %d times, want once", it.Key, it.Delete, it.Value, released[it])
		}
	}
	if released[waited] != 0 {
		t.Errorf("an awaited item was released")
	}
	if st := f.Stats(); st.Drops == 0 || st.Superseded == 0 {
		t.Errorf("drops %d, superseded %d: the test should see both", st.Drops, st.Superseded)
	}
}
