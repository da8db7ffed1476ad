package flusher

import (
	"context"
	"slices"
	"time"
)

// runJob is one closed batch handed from dispatch to a runner.
type runJob struct {
	rb *runBufs
	id uint64
}

// dispatch is the single goroutine that closes batches and hands them to
// runners, at most InFlight at a time. The runners are InFlight goroutines
// started here and kept for the flusher's life (F16): a goroutine started
// for each batch grew its stack again on every batch (the store's PutMany
// runs deep), about 2-3% of a bulk load's CPU in runtime.newstack.
func (f *Flusher) dispatch() {
	defer f.wg.Done()
	sem := make(chan struct{}, f.o.InFlight)
	jobs := make(chan runJob, f.o.InFlight) // sem bounds what is sent: a send never blocks
	defer close(jobs)
	for range f.o.InFlight {
		f.wg.Add(1)
		go f.runner(jobs, sem)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		// Take an in-flight slot first, so items stay queued (and droppable)
		// while the store is busy.
		sem <- struct{}{}
		f.mu.Lock()
		if f.closing && f.n == 0 && len(f.victims) == 0 {
			for f.batches > 0 {
				f.idle.Wait()
			}
			f.mu.Unlock()
			<-sem
			return
		}
		victims := f.victims
		f.victims = nil
		ready, wait := f.readyLocked()
		rb := f.getBufs()
		var id uint64
		if ready {
			rb.batch = f.takeLocked(rb.batch[:0])
			id = f.taken
		}
		f.mu.Unlock()
		for _, v := range victims {
			f.dropped(v, Dropped)
		}
		if len(rb.batch) == 0 {
			f.putBufs(rb)
			<-sem
			if ready || wait <= 0 {
				<-f.kick // everything pending waits for an in-flight key, or nothing is pending
				continue
			}
			timer.Reset(wait)
			select {
			case <-f.kick:
			case <-timer.C:
			}
			timer.Stop()
			continue
		}
		jobs <- runJob{rb, id}
	}
}

// runner runs the batches dispatch sends until it closes jobs, each
// followed by the release of its in-flight slot.
func (f *Flusher) runner(jobs <-chan runJob, sem <-chan struct{}) {
	defer f.wg.Done()
	for j := range jobs {
		f.run(j.rb, j.id)
		<-sem
	}
}

// readyLocked says whether a batch should close now, and if not how long
// until the oldest pending item reaches BatchDelay (0: nothing pending).
func (f *Flusher) readyLocked() (bool, time.Duration) {
	if f.n == 0 {
		return false, 0
	}
	if f.closing || f.drainReq > 0 || f.syncN > 0 || f.n >= f.o.BatchItems || f.bytes >= f.o.BatchBytes {
		return true, 0
	}
	oldest := f.q[f.head].enq // compactLocked keeps q[head] non-nil while n > 0
	age := time.Duration(time.Now().UnixNano() - oldest)
	if age >= f.o.BatchDelay {
		return true, 0
	}
	return false, f.o.BatchDelay - age
}

// takeLocked removes up to one batch of items from the queue, oldest first,
// appended to batch,
// skipping (and keeping in order) every item whose key is in flight or
// already in this batch, so two writes of one key are never in flight at
// once and reach the store in enqueue order. Keys are told apart by their
// 64-bit hashes: two keys of one hash are kept apart too, which costs
// order nothing. With weighted shares and more than one class queued, a
// first pass takes each class's items up to its share of the batch and a
// second fills what is left (F14).
func (f *Flusher) takeLocked(batch []*Item) []*Item {
	t := taking{f: f, batch: batch}
	if f.sh != nil {
		if quota, ok := f.sh.quotas(f.o.BatchItems); ok {
			t.pass(quota)
		}
	}
	t.pass(nil)
	if len(t.batch) > 0 {
		f.taken++
		f.flyingIDs = append(f.flyingIDs, f.taken)
		f.batches++
		f.flying += t.bytes
		f.heldLocked()
		f.compactLocked()
	}
	return t.batch
}

// taking is one batch being taken from the queue.
type taking struct {
	f     *Flusher
	batch []*Item
	bytes int64
}

// pass takes items oldest first, each class's up to quota[class] when
// quota is not nil.
func (t *taking) pass(quota []int) {
	f := t.f
	for i := f.head; i < len(f.q) && len(t.batch) < f.o.BatchItems && t.bytes < f.o.BatchBytes; i++ {
		it := f.q[i]
		if it == nil || quota != nil && quota[it.class] <= 0 {
			continue
		}
		if _, busy := f.inflight[it.kh]; busy {
			continue // in flight, or already in this batch
		}
		f.inflight[it.kh] = struct{}{}
		f.q[i] = nil
		f.n--
		f.bytes -= it.size()
		f.sh.add(it, -1)
		if quota != nil {
			quota[it.class]--
		}
		if it.Sync {
			f.syncN--
		}
		t.bytes += it.size()
		t.batch = append(t.batch, it)
	}
}

// runBufs are one batch's slices, reused from batch to batch (getBufs,
// putBufs) so that a batch allocates none of them.
type runBufs struct{ batch, puts, skipped, dels []*Item }

// getBufs returns spare runBufs, or new ones.
func (f *Flusher) getBufs() *runBufs {
	select {
	case rb := <-f.bufs:
		return rb
	default:
		return new(runBufs)
	}
}

// putBufs keeps rb, emptied, for a later batch (up to InFlight+1 of them).
func (f *Flusher) putBufs(rb *runBufs) {
	clear(rb.batch)
	clear(rb.puts)
	clear(rb.skipped)
	clear(rb.dels)
	rb.batch, rb.puts, rb.skipped, rb.dels = rb.batch[:0], rb.puts[:0], rb.skipped[:0], rb.dels[:0]
	select {
	case f.bufs <- rb:
	default:
	}
}

// run writes one batch: its deletes (one DeleteMany when the store has it,
// else one by one) beside its puts (one PutMany submission).
func (f *Flusher) run(rb *runBufs, id uint64) {
	defer f.putBufs(rb)
	ctx, cancel := context.WithTimeout(context.Background(), f.o.Timeout)
	defer cancel()
	batch := rb.batch
	puts, skipped, dels := rb.puts[:0], rb.skipped[:0], rb.dels[:0]
	defer func() { rb.puts, rb.skipped, rb.dels = puts, skipped, dels }() // grown: kept
	for _, it := range batch {
		switch {
		case it.Delete:
			dels = append(dels, it)
		case f.o.Current != nil && !f.o.Current(it):
			skipped = append(skipped, it)
		default:
			it.Err = nil
			puts = append(puts, it)
		}
	}
	// A batch never holds two items of one key (F3), so its deletes and its
	// puts are independent: they go to the store side by side, and the
	// batch takes the longer of the two, not their sum (a delete first
	// reads its record's header from the device). A sync follows both.
	var delsDone chan struct{}
	if len(dels) > 0 && len(puts) > 0 {
		delsDone = make(chan struct{})
		go func() {
			defer close(delsDone)
			f.deleteAll(ctx, dels)
		}()
	} else {
		f.deleteAll(ctx, dels)
	}
	if len(puts) > 0 {
		f.st.batches.Add(1)
		if err := f.o.Store.PutMany(ctx, puts); err != nil {
			for _, it := range puts {
				if it.Err == nil {
					it.Err = err
				}
			}
		}
	}
	if delsDone != nil {
		<-delsDone
	}
	if len(puts) > 0 || len(dels) > 0 {
		f.syncIfNeeded(ctx, append(puts[:len(puts):len(puts)], dels...))
	}
	for _, it := range skipped {
		f.st.superseded.Add(1)
		if f.o.OnDrop != nil {
			f.o.OnDrop(it, Superseded)
		}
		if it.done != nil {
			it.done <- nil // a newer write owns the key now
		}
	}
	for _, it := range batch {
		if skippedItem(skipped, it) {
			continue
		}
		if it.Err != nil {
			f.st.errors.Add(1)
			f.errs.failed(f.o.Logger, it, time.Now())
		} else {
			f.st.written.Add(1)
			f.st.bytes.Add(uint64(it.size()))
		}
		if f.o.OnDone != nil {
			f.o.OnDone(it, it.Err)
		}
		if it.done != nil {
			it.done <- it.Err
		}
	}
	f.mu.Lock()
	for _, it := range batch {
		f.flying -= it.size()
		f.heapHeld.Add(-it.heapSize())
		delete(f.inflight, it.kh)
		// A failed delete stays counted: the store may still hold the
		// copy, so DeletePending stays true for the flusher's life (F8).
		// A Sync one does not: its waiter was told, and its caller keeps
		// the key as it was, the copy included (writethrough, T28).
		if it.Delete && (it.Err == nil || it.Sync) {
			if f.dels[string(it.Key)]--; f.dels[string(it.Key)] <= 0 {
				delete(f.dels, string(it.Key))
			}
		}
	}
	f.batches--
	if i := slices.Index(f.flyingIDs, id); i >= 0 {
		f.flyingIDs = slices.Delete(f.flyingIDs, i, i+1)
	}
	f.heldLocked()
	f.idle.Broadcast()
	f.mu.Unlock()
	for _, it := range batch {
		f.release(it)
	}
	f.wake()
}

// deleteAll runs a batch's deletes, setting each item's Err.
func (f *Flusher) deleteAll(ctx context.Context, dels []*Item) {
	if md, ok := f.o.Store.(ManyDeleter); ok && len(dels) > 1 {
		keys := make([][]byte, len(dels))
		for i, it := range dels {
			keys[i] = it.Key
		}
		f.st.deleteCalls.Add(1)
		for i, err := range md.DeleteMany(ctx, keys) {
			dels[i].Err = err
		}
		return
	}
	for _, it := range dels {
		f.st.deleteCalls.Add(1)
		it.Err = f.o.Store.Delete(ctx, it.Key)
	}
}

func skippedItem(skipped []*Item, it *Item) bool {
	for _, s := range skipped {
		if s == it {
			return true
		}
	}
	return false
}

// Syncer is implemented by stores that can make completed writes durable.
type Syncer interface {
	Sync(ctx context.Context) error
}

// syncIfNeeded makes the batch durable when a Sync put or delete in it
// succeeded, so a waiter is released only after its write or delete is
// durable (F1).
func (f *Flusher) syncIfNeeded(ctx context.Context, items []*Item) {
	s, ok := f.o.Store.(Syncer)
	if !ok {
		return
	}
	need := false
	for _, it := range items {
		need = need || (it.Sync && it.Err == nil)
	}
	if !need {
		return
	}
	if err := s.Sync(ctx); err != nil {
		for _, it := range items {
			if it.Sync && it.Err == nil {
				it.Err = err
			}
		}
	}
}
