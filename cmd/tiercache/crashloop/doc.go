// Package crashloop drives a running tiercache sidecar through SIGKILLs at
// random moments under a mixed load, restarts it on the same store, and
// checks every key against the log of operations acknowledged and issued.
// It is test code shared by cmd/tiercache's TestCrashLoop (the sidecar on
// the emulated namespace on the host) and the QEMU guest's crash loop (the
// sidecar on an NVM namespace through passthrough, vmtest/guest/nvmens).
//
// Each connection owns its keys, so a key's operations are one sequence:
// after a kill its state is the one after its last acknowledged operation,
// or the one its single operation in flight would give.
//
// The load: SET with values from 1 B to 4 MiB (mostly small), overwrites,
// DEL, PEXPIRE of an hour or under a second, and GET; and on each
// worker's list and hash RPUSH, LPOP, HSET and HDEL.
//
// # Invariants
//
//  1. A read after a restart is judged against the acknowledged state, then
//     the in-flight one; a value no SET of the key wrote is torn
//     (TestCheckKeyClassifies).
//  2. Near an expiry (within a second either side of the window in which
//     the server may have set it) a key may read either way; everywhere
//     else, present or absent is exact (TestLiveAtWindow). The server
//     judges a read's expiry at one moment between its sending and its
//     answer (its command's time): a value read is judged at the sending,
//     a nil at the answer (TestMatchesJudgesAtTheReadWindow).
//  3. In an exact mode (writethrough) a missing key whose acknowledged
//     state is live is a lost write, a present key whose acknowledged state
//     is absent is a resurrected delete, and a missing key whose in-flight
//     operation was a SET is vanished (TestCheckKeyClassifies).
//  4. A value names the SET that wrote it: crashValue(key, seq) differs for
//     every (key, seq) and starts with seq (TestValueNamesItsSet).
//  5. After a restart a present key whose operation was in flight takes the
//     expiry the server reports (the value does not tell whether a PEXPIRE
//     in flight took effect); in an exact mode that expiry must be the
//     acknowledged state's or the in-flight one's (TestExpiryFits).
//  6. In drain mode a key whose acknowledged state is live and that reads
//     nil while the sidecar runs is a lost write unless the cold store
//     reclaimed records since the sidecar started (coldReclaimed): with
//     backpressure no acknowledged write is dropped while cold has room
//     (TestCrashLoop/drain).
//  7. Each worker also changes a list (RPUSH, LPOP) and a hash (HSET, HDEL)
//     whose items name the operation that wrote them: in an exact mode
//     (writethrough, and drain after a clean stop) an aggregate reads after
//     a restart as acknowledged or as its operation in flight gives;
//     otherwise (drain after a kill, and drain before a clean stop, the key
//     maybe dropped while it ran) as it could have been at some point (a
//     list a run of one of its histories: its pushes since it was empty,
//     or since a restart gave it an older state or left its push in
//     flight unapplied, after that state; a
//     hash's values HSETs of their fields); an item no operation of the
//     key wrote is torn (TestAggregateStates).
//
// # Caveats
//
// Run is not safe for concurrent use on one Options.Dir.
package crashloop
