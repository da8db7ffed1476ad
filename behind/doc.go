// Package behind writes a cache's changes behind to a shared store (the
// remote tier, backend.Shared): a bounded queue holding at most one pending
// change per key, the newest (a put, a delete or a new expiry), sent in
// batches, each batch one PutMany, DeleteMany and RetimeMany.
//
// # Invariants
//
//   - W1: Put, Delete and Retime never block: they record the change as the
//     key's pending one, replacing or merging into a pending change of the
//     key (a retime of a pending put changes the put's expiry); past
//     QueueItems or QueueBytes the oldest pending change is dropped and
//     counted (TestCoalescesAndBounds).
//   - W2: a key's changes reach the store in the order they were made, the
//     newest last: a change is sent only while no other change of its key
//     is in flight, and a change made meanwhile waits for that one
//     (TestOrderPerKey).
//   - W3: Pending(key) is true from a change's call until the store
//     answered it (or it was dropped), QueuedValue(key) while a put or
//     delete of it waits to be sent; Wait(key) returns true once Pending
//     is false, false if its context ended first (TestPendingAndWait).
//   - W4: while the store is not Available, nothing is sent: changes wait,
//     bounded by W1; a change the store fails is retried (W7) and counted
//     failed once given up (TestWaitsWhileUnavailable).
//   - W5: Close sends what is pending within its deadline, drops the rest
//     (counted), and returns once nothing is in flight; calls after Close
//     are dropped (TestCloseSendsPending).
//   - W6: a lazy put (PutLazy) is a put like any other (W1-W5) whose value,
//     expiry and flags its Fill gives when it is sent: the newest at that
//     moment, never older than the change that queued it; a Fill that
//     finds nothing sends nothing (TestLazyPutSendsTheValueAtSend).
//   - W7: a change the store failed is queued again as its key's pending
//     change and sent after RetryBackoff, doubling at each failure up to
//     5 s, at most Retries times (then given up, counted failed): unless
//     a put or delete of the key made since decides; a new expiry made
//     since takes the failed change's value (TestRetriesFailedChanges).
//
// # Caveats
//
//   - The queue copies keys and values: the caller's slices are its own
//     again when the call returns.
package behind
