package server

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tiercache/tiercache/value/zset"
)

// The blocking list commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP)
// wait for a push on another connection without polling and without
// holding any server-wide lock while they wait (S22). A blocked connection
// registers a waiter under each of its keys in the server's
// blockRegistry; a command that pushes onto a list calls Server.wake,
// which serves the key's waiters in the order they blocked (Redis's
// FIFO), popping for each in turn while the list has elements, and hands
// each its element on a channel. Registering (after a last look at the keys) and serving both
// hold the registry's mutex, so a push between the look and the
// registration cannot be missed; the pushes themselves never take it while
// nobody waits. WAIT waits here too, on no key (wait.go).

// waiter is one blocked connection.
type waiter struct {
	keys   []string
	left   bool // pop from the head (BLPOP, BLMOVE LEFT)
	move   bool // BLMOVE: push onto dst too
	dst    []byte
	toLeft bool
	zpop   zpopEnd          // BZPOPMIN, BZPOPMAX: pop from a sorted set
	mpop   int64            // BZMPOP, BLMPOP: pop up to this many, answered as ZMPOP or LMPOP answers
	wait   bool             // WAIT: on no key, served by nothing, 0 at its timeout (wait.go)
	ch     chan blockResult // buffered: a server never waits for the waiter
	c      *conn            // the blocked connection
	done   bool             // served or cancelled (under the registry's mutex)
}

// blockResult is what a waiter is handed.
type blockResult struct {
	key    string
	val    []byte       // a list's element popped
	vals   [][]byte     // a list's elements popped by LMPOP, in order
	popped []zset.Entry // a sorted set's members popped, in order
	err    error
	closed bool // the server is shutting down
	// unblocked: CLIENT UNBLOCK ended the wait (unblock.go), answered as
	// a timeout or an error; nothing was popped.
	unblocked unblockHow
}

// blockRegistry is the server's waiters by key.
type blockRegistry struct {
	mu      sync.Mutex
	keys    map[string][]*waiter
	alone   map[*waiter]bool // waiters on no key (WAIT)
	closed  bool
	waiting atomic.Int64 // registered waiters (INFO blocked_clients)
}

// add registers w under each of its keys; the caller holds mu.
func (r *blockRegistry) add(w *waiter) {
	if r.keys == nil {
		r.keys = make(map[string][]*waiter)
	}
	if len(w.keys) == 0 {
		if r.alone == nil {
			r.alone = make(map[*waiter]bool)
		}
		r.alone[w] = true
	}
	for _, k := range w.keys {
		r.keys[k] = append(r.keys[k], w)
	}
}

// finish takes w out of every queue and hands it res; the caller holds mu.
func (r *blockRegistry) finish(w *waiter, res blockResult) {
	r.take(w)
	w.ch <- res
}

// take takes w out of every queue, done; the caller holds mu and hands
// it its result.
func (r *blockRegistry) take(w *waiter) {
	for _, k := range w.keys {
		q := r.keys[k]
		for i, x := range q {
			if x == w {
				q = append(q[:i:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(r.keys, k)
		} else {
			r.keys[k] = q
		}
	}
	delete(r.alone, w)
	w.done = true
	r.waiting.Add(-1)
}

// cancel takes w out of the registry unless it was already served; it
// reports whether it did (then w gets nothing more).
func (r *blockRegistry) cancel(w *waiter) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w.done {
		return false
	}
	r.finish(w, blockResult{})
	<-w.ch
	return true
}

// shutdown hands every waiter a closed result, and refuses new ones.
func (r *blockRegistry) shutdown() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, q := range r.keys {
		for _, w := range q {
			if !w.done {
				r.finish(w, blockResult{closed: true})
			}
		}
	}
	for w := range r.alone {
		r.finish(w, blockResult{closed: true})
	}
}

// serveOne tries to serve w from key with ops; false when key has nothing
// for it (absent, or no longer a list). The caller holds mu.
func (ops *listOps) serveOne(w *waiter, key string) (blockResult, bool) {
	if w.zpop != zpopNone {
		return ops.zpopOne(w, key)
	}
	if w.move {
		moved, err := ops.move([]byte(key), w.dst, w.left, w.toLeft)
		if err == nil && !moved {
			return blockResult{}, false
		}
		if err != nil {
			return blockResult{key: key, err: err}, true
		}
		return blockResult{key: key, val: append([]byte(nil), ops.outs[0]...)}, true
	}
	count := 1
	if w.mpop > 0 {
		count = int(min(w.mpop, 1<<40))
	}
	exists, err := ops.pop([]byte(key), w.left, count)
	if err != nil || !exists || len(ops.outs) == 0 {
		return blockResult{}, false // a key that stopped being a list serves nobody
	}
	if w.mpop > 0 {
		return blockResult{key: key, vals: ops.copyOuts()}, true
	}
	return blockResult{key: key, val: append([]byte(nil), ops.outs[0]...)}, true
}

// wake serves the clients blocked on key after a push onto it, the
// longest waiting first, while it has elements; a BLMOVE served pushes
// onto its destination, whose waiters are served next.
func (s *Server) wake(ops *listOps, key []byte) {
	if s.blk.waiting.Load() == 0 {
		return
	}
	next := []string{string(key)}
	for len(next) > 0 {
		k := next[0]
		next = s.serveWaiters(ops, k, next[1:])
	}
	ops.release()
}

// serveWaiters serves key k's waiters in order while its list has
// elements, and returns next with the destinations of served moves added.
// The registry stays locked while it serves (a waiter's turn is its place
// in the queue); the deferred unlock keeps a panic in a command from
// wedging every blocked client.
//
// While a client tracks keys, a waiter served is handed its result only
// once the serving command's invalidations went out (handOff), and those
// its serve caused wait for its reply (holdPushes): redis-server 7.0
// serves a blocked client after the command that pushed, as its current
// client, so that the invalidations of the write come before the
// receiver's reply and those of its serve after it (S90).
func (s *Server) serveWaiters(ops *listOps, k string, next []string) []string {
	s.blk.mu.Lock()
	defer s.blk.mu.Unlock()
	later := s.trk.active()
	for {
		w, res, ok := ops.serveFirst(s.blk.keys[k], k)
		if !ok {
			return next
		}
		s.blk.take(w)
		if later {
			w.c.push.holdPushes()
			ops.handoffs = append(ops.handoffs, handoff{w, res})
		} else {
			w.ch <- res
		}
		if res.err == nil {
			s.touch(touchKeys, [][]byte{nil, []byte(k), w.dst}) // WATCH sees the pop (and the push)
			if s.keyHooks() {
				ops.served = append(ops.served, servedPop{key: []byte(k), dst: w.dst, left: w.left, toLeft: w.toLeft, move: w.move, zpop: w.zpop, to: w.c})
			}
		}
		if w.move && res.err == nil {
			next = append(next, string(w.dst))
		}
	}
}

// handoff is a served waiter's result, handed to it after the command
// that served it (handOff).
type handoff struct {
	w   *waiter
	res blockResult
}

// handOff hands the waiters the connection's last command served their
// results, once its events are flushed (S90).
func (c *conn) handOff() {
	ops := &c.lists
	for i, h := range ops.handoffs {
		h.w.ch <- h.res
		ops.handoffs[i] = handoff{}
	}
	ops.handoffs = ops.handoffs[:0]
}

// touchKeys is a command whose keys are all its arguments, for touching
// the keys a served waiter changed.
var touchKeys = &command{first: 1, last: -1, step: 1}

// blockCmd is what a blocking command waits for.
type blockCmd struct {
	keys   [][]byte
	left   bool
	move   bool
	dst    []byte
	toLeft bool
	zpop   zpopEnd
	mpop   int64
	now    bool // never wait: ZMPOP
}

// bpopCmd: B[LR]POP key... timeout → [key, element] from the first key
// with one, else once one is pushed; a nil array at the timeout.
func (c *conn) bpopCmd(args [][]byte, left bool) {
	d, msg := parseTimeout(args[len(args)-1])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	c.block(blockCmd{keys: args[1 : len(args)-1], left: left}, d)
}

// cmdBLMove: BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout.
func (c *conn) cmdBLMove(args [][]byte) {
	if from, to, ok := c.wheresArgs(args[3], args[4]); ok {
		c.bmove(args[1], args[2], from, to, args[5])
	}
}

// cmdBRPopLPush: BRPOPLPUSH source destination timeout.
func (c *conn) cmdBRPopLPush(args [][]byte) { c.bmove(args[1], args[2], false, true, args[3]) }

func (c *conn) bmove(src, dst []byte, from, to bool, timeout []byte) {
	d, msg := parseTimeout(timeout)
	if msg != "" {
		c.w.Error(msg)
		return
	}
	c.block(blockCmd{keys: [][]byte{src}, left: from, move: true, dst: dst, toLeft: to}, d)
}

// block answers b at once if one of its keys has an element (or is of the
// wrong kind); otherwise, inside EXEC or a script or for a command that
// never waits (b.now), it answers nil as Redis does, and
// else it registers a waiter, which the connection's loop waits on once
// the command returns (awaitBlocked), holding no lock.
func (c *conn) block(b blockCmd, d time.Duration) {
	w := &waiter{left: b.left, move: b.move, dst: b.dst, toLeft: b.toLeft, zpop: b.zpop, mpop: b.mpop, ch: make(chan blockResult, 1), c: c}
	if b.move {
		w.dst = append([]byte(nil), b.dst...)
	}
	switch out, res := c.serveOrRegister(b, w); out {
	case blockServedNow:
		if !b.move && res.err == nil && c.s.keyHooks() { // BLMOVE's events are its table's (evMove)
			c.lists.served = append(c.lists.served, servedPop{key: []byte(res.key), left: w.left, zpop: w.zpop})
		}
		if w.mpop > 0 && res.err == nil { // its keys follow numkeys: runWrite touches none
			c.s.touch(touchKeys, [][]byte{nil, []byte(res.key)})
			c.touched = true
		}
		c.blockReply(w, res)
		if b.move && res.err == nil {
			c.wakeAfter(w.dst)
		}
	case blockWrongType:
		c.w.Error(errWrongType)
	case blockNil:
		c.lists.release()
		if b.move && c.inExec {
			c.w.Null()
		} else {
			c.w.NullArray()
		}
	default:
		c.lists.release()
		c.blocked, c.blockFor = w, d
	}
}

// The outcomes of serveOrRegister.
const (
	blockRegistered = iota
	blockServedNow
	blockWrongType
	blockNil
)

// serveOrRegister, under the registry lock (released by defer, so a panic
// in a command cannot wedge every blocked client), serves w from the
// first of b's keys that has an element, or finds one of the wrong kind,
// or (inside EXEC, with b.now, or with the server closing) answers nil, or else
// registers w.
func (c *conn) serveOrRegister(b blockCmd, w *waiter) (int, blockResult) {
	r := &c.s.blk
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.isKilled() {
		// CLIENT KILL came first (killWaiter takes mu after it marks c
		// killed): nothing waits for it, and it pops nothing, not even what
		// was pushed after the KILL answered while this goroutine lagged
		// behind its own check before the command (S54).
		return blockNil, blockResult{}
	}
	r.waiting.Add(1) // before the last look: a push after it then takes mu (wake)
	for _, k := range b.keys {
		w.keys = []string{string(k)}
		if res, ok := c.lists.serveOne(w, w.keys[0]); ok {
			r.waiting.Add(-1)
			return blockServedNow, res
		}
		if kind, ok := c.s.cache.KindOf(k); ok && kind != w.wants() {
			r.waiting.Add(-1)
			return blockWrongType, blockResult{}
		}
	}
	c.noop = true // nothing changed (yet): WATCH is touched when it is served (wake)
	if c.inExec || r.closed || b.now {
		r.waiting.Add(-1)
		return blockNil, blockResult{}
	}
	w.keys = w.keys[:0]
	for _, k := range b.keys {
		w.keys = append(w.keys, string(k))
	}
	r.add(w)
	c.waiter = w
	return blockRegistered, blockResult{}
}

// killWaiter hands the waiter c registered last a closed result if it
// still waits (CLIENT KILL, S54): it leaves the registry before the KILL
// answers. c's goroutine then ends its wait as on a server shutdown.
func (r *blockRegistry) killWaiter(c *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := c.waiter; w != nil && !w.done {
		r.finish(w, blockResult{closed: true})
	}
}

// blockReply answers a served waiter.
func (c *conn) blockReply(w *waiter, res blockResult) {
	switch {
	case res.err != nil:
		c.cacheError(res.err)
	case w.move:
		c.w.Bulk(res.val)
	case w.mpop > 0 && w.zpop == zpopNone:
		c.lmpopReply(res.key, res.vals)
	case w.mpop > 0:
		c.zmpopReply(res.key, res.popped)
	case w.zpop != zpopNone:
		c.w.Array(3)
		c.w.BulkString(res.key)
		c.w.Bulk(res.popped[0].Member)
		c.w.Double(res.popped[0].Score)
	default:
		c.w.Array(2)
		c.w.BulkString(res.key)
		c.w.Bulk(res.val)
	}
}

// awaitBlocked waits, holding no lock, for the waiter the last command
// registered: until it is served, its timeout passes (a nil array), its
// client hangs up or is killed (CLIENT KILL; the connection ends, an
// element served in that instant goes back where it came from) or the
// server shuts down.
func (c *conn) awaitBlocked() {
	w := c.blocked
	c.blocked = nil
	c.flush() // the replies before this one go out now
	c.showIdle()
	c.blockedNow.Store(true)
	defer c.blockedNow.Store(false)
	// While it waits, what is pushed to it (messages, invalidations) is
	// written by the pusher, as to a connection waiting for input
	// (TestPushesReachABlockedClient); nothing else would send them, as
	// it reads nothing.
	c.push.used.Store(true)
	c.markIdle()
	defer c.endIdle()
	// What serves it reads the clock (conn.now).
	c.timed = false
	var timeout <-chan time.Time
	if c.blockFor > 0 {
		t := time.NewTimer(c.blockFor)
		defer t.Stop()
		timeout = t.C
	}
	hup, stop := c.watchHangup()
	defer stop()
	select {
	case res := <-w.ch:
		c.endIdle()
		woke := c.s.clock()
		c.blockServed(w, res)
		c.observeBlocked(woke)
	case <-timeout:
		c.endIdle()
		woke := c.s.clock()
		if c.s.blk.cancel(w) {
			c.timedOut(w)
		} else {
			c.blockServed(w, <-w.ch)
		}
		c.observeBlocked(woke)
	case <-hup:
		c.blockCmd, c.blockEntry = nil, nil
		c.hungUp(w)
	case <-c.killed: // CLIENT KILL
		c.blockCmd, c.blockEntry = nil, nil
		c.hungUp(w)
	}
	c.push.releasePushes() // what its serve invalidated, after its reply (S90)
}

// hungUp ends a blocked wait whose client is gone: an element served to
// it in that instant goes back where it came from.
func (c *conn) hungUp(w *waiter) {
	c.quit = true
	if c.s.blk.cancel(w) {
		return
	}
	if res := <-w.ch; res.err == nil && !res.closed && res.unblocked == notUnblocked && !w.move {
		c.pushBack(w, res)
		c.handOff() // the clients its element served in turn
	}
}

// pushBack puts an element served to a client as it hung up back at the
// end it came from. It is a write like any command's: it holds the
// transaction lock shared (so it cannot land between the commands of an
// EXEC, S15) and touches WATCHed keys.
func (c *conn) pushBack(w *waiter, res blockResult) {
	c.s.tx.excl.RLock()
	defer c.s.tx.excl.RUnlock()
	key := []byte(res.key)
	if w.zpop != zpopNone {
		c.zpushBack(key, res)
		return
	}
	vals := [][]byte{res.val}
	if w.mpop > 0 { // LMPOP's, in the order popped: pushed back in turn, the last popped first
		vals = slices.Clone(res.vals)
		slices.Reverse(vals)
	}
	if _, err := c.lists.push(key, vals, w.left, false); err == nil {
		c.s.touch(touchKeys, [][]byte{nil, key})
		c.s.wake(&c.lists, key)
	}
}

// blockServed answers a blocked command ended by something other than
// its timeout. Ended by CLIENT UNBLOCK (TIMEOUT or ERROR) or served an
// error it is failed in commandstats, as redis-server 7.0 counts it
// (updateStatsOnUnblock, which CLIENT UNBLOCK calls with had_errors set,
// S91); its call was counted as it blocked.
func (c *conn) blockServed(w *waiter, res blockResult) {
	switch {
	case res.closed:
		c.quit = true
	case res.unblocked == unblockTimeout:
		c.timedOut(w) // as its timeout answers: WAIT 0, a pop a nil array
		c.cmd.stats.failed.Add(1)
	case res.unblocked == unblockError:
		c.w.Error(errUnblocked)
		c.cmd.stats.failed.Add(1)
	default:
		c.blockReply(w, res)
		if res.err != nil {
			c.cmd.stats.failed.Add(1)
		}
	}
}
