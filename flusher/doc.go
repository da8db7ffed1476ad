// Package flusher moves warm-tier evictions (and cold deletes, drain and
// writethrough writes) to the cold store: a bounded queue, batches that
// close by count, bytes or age, each batch sent as one Store.PutMany (one
// submission of linked chains: chunks, then header), completions handled
// asynchronously by InFlight runner goroutines kept for the flusher's life.
//
// # Invariants
//
//   - F1: an item is reported written (OnDone with nil) only after the store
//     acknowledged it; a Sync item's waiter is released only after the store
//     made it durable (Syncer) or failed.
//   - F2: Enqueue never blocks. In Backpressure mode (the default) it never
//     drops an item: past QueueItems or QueueBytes it queues it anyway,
//     counted in Stats.Overflow, and the callers keep the queue near its
//     bounds by waiting in WaitRoom before they write (TestBackpressureKeepsEverything).
//     In Shed mode, when the queue is over QueueItems or QueueBytes it
//     drops the oldest droppable item (not Sync, not a delete), counts it
//     and reports it through OnDrop. Finding it costs amortized O(1): the
//     deletes and Sync items at the queue's head are not scanned again on
//     every drop (TestDropOrderModel; BenchmarkEnqueueBehindDeletes: 133 ns
//     against 73 µs per Enqueue behind 16,000 deletes).
//   - F3: two items of the same key are never in flight at once, and they
//     reach the store in enqueue order (keys are told apart by a 64-bit
//     hash: two keys of one hash are kept apart too).
//   - F4: a put that Current says is superseded is not written.
//   - F5: Close writes everything pending, waits for every completion, and
//     is idempotent; Enqueue after Close returns ErrClosed.
//   - F6: a device error is counted, reported to OnDone and logged, the
//     first at once and later ones at most every 10 s with how many failed
//     in between (a full or failed device fails every write); the flusher
//     keeps going (TestErrorsLoggedSparingly).
//   - F7: with an Admitter, a put that it refuses is never queued.
//   - F8: DeletePending(key) is true from the Enqueue of a delete of key
//     until the store completed it (and OnDone returned): a caller that
//     sees false after the delete was enqueued knows the store no longer
//     holds the deleted copy. A delete the store failed stays pending for
//     the flusher's life, but for a Sync one: its waiter is told, and its
//     caller keeps the key, copy included (TestDeletePending).
//   - F9: a batch's deletes reach a store that is a ManyDeleter in one
//     DeleteMany call, each item with its own outcome (TestDeletesBatched),
//     and run beside the batch's puts, which are of other keys (F3); the
//     batch completes, and a sync is made, after both
//     (TestDeletesBesidePuts).
//   - F10: Held is the key and value bytes queued or in flight; WaitRoom
//     returns true once Held is at most its limit, false if its context
//     ended or the flusher closed first, and counts the calls that waited
//     (Stats.Throttled, ThrottleWait) (TestWaitRoom). HeapHeld is Held
//     less the values of OffHeap items, and both go back to 0 once every
//     item completed or was dropped (TestHeapHeld).
//   - F11: WaitQueue returns true once at most its number of items is
//     queued and at most its bytes held, false if its context ended or the
//     flusher closed first; its waits are not counted (TestWaitQueue).
//   - F12: WaitTaken returns once every batch taken before it was called
//     has completed (its OnDone callbacks returned), whatever was taken
//     since, and false if its context ended first (TestWaitTaken).
//   - F13: OnRelease gets every item Enqueue accepted exactly once, after
//     its OnDone or OnDrop, when the flusher no longer touches it, and
//     never an item someone awaits (Begin, Wait): its owner may reuse it
//     (TestReleaseOncePerItem).
//   - F14: with Weights, each class (ClassOf an item's key) has a share of
//     the flusher in proportion to its weight among the classes with items
//     queued: in Shed mode a full queue drops the oldest droppable item of the class
//     furthest past its share of the queue's items or bytes (the incoming
//     item itself when its class is past its share with nothing
//     droppable queued: ErrDropped), never one of a class within its
//     share; and while two or more classes have items queued, each batch
//     first takes each class's oldest items up to its share of BatchItems
//     (at least one), then fills from the oldest. Without Weights, one
//     FIFO as above (TestSharesKeepAClassFromStarving).
//   - F15: ValidateTuning checks every field but Store, each problem
//     reported at once, as Validate does (TestValidateTuningWithoutStore),
//     so that a configuration is refused before anything opens.
//   - F16: batches run on InFlight runner goroutines started with the
//     flusher and stopped by Close, never on a goroutine started for the
//     batch (TestBatchesRunOnFixedRunners).
//
// # Caveats
//
//   - The flusher owns Item.Key and Item.Value from Enqueue on.
//   - OnDone and OnDrop run on flusher goroutines, never inside Enqueue;
//     they must not block.
//   - Sync items and deletes, and in Backpressure mode every item, can push
//     the queue past its bound (counted in Stats.Overflow) rather than being
//     dropped.
//   - Weighted shares bound what one class does to another's queued
//     items and batch slots, not its wait for WaitRoom: writers of every
//     class wait while the flusher as a whole holds too much.
package flusher
