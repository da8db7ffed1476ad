package server

import (
	"sync"
	"sync/atomic"
)

// txLock isolates transactions (S15): every command but the transaction
// controls runs holding excl's read lock, EXEC holds it for writing, so
// no command of another connection runs between two commands of an EXEC
// and none sees a transaction half applied. A command that will wait for
// a long time (a blocking pop) must release it while it waits.
//
// watches is WATCH's registry: for each watched key, the connections
// watching it. A write command marks them dirty once it ran (touch), and
// EXEC aborts a dirty transaction. count is the number of watched
// (key, connection) pairs, so that touch costs one atomic load while
// nobody watches.
type txLock struct {
	excl    sync.RWMutex
	mu      sync.Mutex
	watches map[string]map[*conn]struct{}
	count   atomic.Int64
}

// touch marks dirty every connection that watches one of the keys of
// cmd found in args (by the command's key positions).
func (s *Server) touch(cmd *command, args [][]byte) {
	if s.tx.count.Load() == 0 || cmd.first == 0 {
		return
	}
	last := cmd.last
	if last < 0 {
		last = len(args) + last
	}
	s.tx.mu.Lock()
	for i := cmd.first; i <= last && i < len(args); i += max(cmd.step, 1) {
		for w := range s.tx.watches[string(args[i])] {
			w.dirty.Store(true)
		}
	}
	s.tx.mu.Unlock()
}

// touchKey marks dirty every connection watching key (a change no
// command made: the hash field sweeper's).
func (s *Server) touchKey(key []byte) {
	if s.tx.count.Load() == 0 {
		return
	}
	s.tx.mu.Lock()
	for w := range s.tx.watches[string(key)] {
		w.dirty.Store(true)
	}
	s.tx.mu.Unlock()
}

// touchAll marks dirty every connection watching a key that exists now
// (FLUSHALL, before it runs: a flush touches the keys it removes).
func (s *Server) touchAll() {
	if s.tx.count.Load() == 0 {
		return
	}
	s.tx.mu.Lock()
	defer s.tx.mu.Unlock()
	for k, ws := range s.tx.watches {
		if s.cache.Exists([]byte(k)) == 0 {
			continue
		}
		for w := range ws {
			w.dirty.Store(true)
		}
	}
}

// watch adds key to c's watched keys, noting whether it exists now: at
// EXEC a key that existed and no longer does expired (or was lost)
// meanwhile, which aborts the transaction as a write would.
func (c *conn) watch(key []byte) {
	k := string(key)
	if _, ok := c.watched[k]; ok {
		return
	}
	t := &c.s.tx
	t.mu.Lock()
	if t.watches == nil {
		t.watches = map[string]map[*conn]struct{}{}
	}
	ws := t.watches[k]
	if ws == nil {
		ws = map[*conn]struct{}{}
		t.watches[k] = ws
	}
	ws[c] = struct{}{}
	t.count.Add(1)
	t.mu.Unlock()
	if c.watched == nil {
		c.watched = map[string]bool{}
	}
	c.watched[k] = c.s.cache.Exists(key) > 0 // after registering: a write in between marks c dirty
}

// unwatch forgets every key c watches and clears its dirty mark.
func (c *conn) unwatch() {
	if len(c.watched) > 0 {
		t := &c.s.tx
		t.mu.Lock()
		for k := range c.watched {
			if ws := t.watches[k]; ws != nil {
				delete(ws, c)
				if len(ws) == 0 {
					delete(t.watches, k)
				}
				t.count.Add(-1)
			}
		}
		t.mu.Unlock()
		clear(c.watched)
	}
	c.dirty.Store(false)
}

// watchBroken reports whether EXEC must abort for WATCH: a watched key was
// written, or one that existed at WATCH is gone (expired). Called with
// the exclusive lock held.
func (c *conn) watchBroken() bool {
	if c.dirty.Load() {
		return true
	}
	for k, existed := range c.watched {
		if existed && c.s.cache.Exists([]byte(k)) == 0 {
			return true
		}
	}
	return false
}
