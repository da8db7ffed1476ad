package server

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// pushQueue holds what other goroutines send a connection out of band:
// pub/sub messages (it is the connection's pubsub.Subscriber) and client
// tracking's invalidations. Deliver appends; the server's pusher writes
// the queue of an idle connection (pushwrite.go); otherwise, and for
// what the socket did not take, the connection is woken (outConn.Wake)
// and its goroutine writes the queue between its replies before each
// flush (conn.flush, drainPushes). A publisher never waits for a socket
// (S32). What a
// subscriber has not read, queued here and unsent in its socket's spill,
// is bounded like Redis's client-output-buffer-limit pubsub: past the
// hard limit, or past the soft one for longer than its seconds, the
// connection is closed, counted and logged; a connection that subscribes
// to nothing (tracking only) is bounded by MaxOutputBytes instead.
type pushQueue struct {
	c     *conn
	resp3 atomic.Bool // the connection speaks RESP3: messages go as pushes
	// pending is set while buf holds bytes (checked without mu by flush).
	pending atomic.Bool
	// used is set at the first push: from then on the connection may be
	// idle (markIdle).
	used atomic.Bool
	// listed: the queue is on the pusher's list (pushwrite.go).
	listed bool

	mu    sync.Mutex
	buf   []byte
	spare []byte
	dead  bool // closed for its limit: refuses everything
	// holding: the connection was served in a blocking command and has
	// not written its reply yet; held are the invalidations its serve
	// caused, sent after that reply (S90: holdPushes, releasePushes).
	holding   bool
	held      []byte
	overSince time.Time // when it passed the soft limit (zero: under it)
}

// pushes returns c's queue, made at its first subscription or tracking.
func (c *conn) pushes() *pushQueue {
	if c.push == nil {
		c.push = &pushQueue{c: c}
		c.push.resp3.Store(c.w.Proto() == 3)
		if c.out != nil {
			c.out.wakes.Store(true)
			c.out.direct = &c.push.mu
		}
	}
	return c.push
}

// Deliver queues a RESP2 message (a RESP3 connection gets it as a push:
// '>' for its first byte). It never blocks; false means refused: the
// connection is past its limit and closing.
func (q *pushQueue) Deliver(msg []byte) bool {
	if q.resp3.Load() {
		return q.deliver(msg[1:], '>')
	}
	return q.deliver(msg, 0)
}

// holdPushes starts holding back the invalidations that come after the
// serve of c's blocking command (deliverAfterReply): redis-server 7.0
// sends them after its reply (trackingHandlePendingKeyInvalidations).
func (q *pushQueue) holdPushes() {
	q.mu.Lock()
	q.holding = true
	q.mu.Unlock()
}

// releasePushes queues what holdPushes held, once the reply of the
// blocking command is written (its connection's goroutine, which sends
// them at its next flush).
func (q *pushQueue) releasePushes() {
	q.mu.Lock()
	if q.holding {
		q.holding = false
		if len(q.held) > 0 && !q.dead {
			q.buf = append(q.buf, q.held...)
			q.pending.Store(true)
		}
		q.held = nil
	}
	q.mu.Unlock()
}

// deliverAfterReply is deliver for an invalidation that comes after the
// reply of a blocking command served but not answered yet: caused by its
// serve, or a BCAST one (Redis sends those at the end of its event loop
// cycle).
func (q *pushQueue) deliverAfterReply(b []byte, first byte) bool {
	q.mu.Lock()
	if q.holding && !q.dead {
		if first != 0 {
			q.held = append(q.held, first)
		}
		q.held = append(q.held, b...)
		q.mu.Unlock()
		return true
	}
	q.mu.Unlock()
	return q.deliver(b, first)
}

// deliver queues first (unless 0) then b.
func (q *pushQueue) deliver(b []byte, first byte) bool {
	s := q.c.s
	q.mu.Lock()
	if q.dead {
		q.mu.Unlock()
		return false
	}
	total := int64(len(q.buf) + len(b) + 1)
	if q.c.out != nil {
		total += q.c.out.unsent.Load()
	}
	// The pubsub class is a subscriber's; a client that only tracks keys
	// is of the normal class, as in Redis (getClientType), bounded by
	// MaxOutputBytes (TestTrackingClientIsNotPubSubLimited).
	subscriber := q.c.subs.Load() > 0
	why := ""
	if subscriber {
		why = q.overLimit(total, &s.conf)
	} else if total > int64(s.opts.MaxOutputBytes) {
		why = "normal"
	}
	if why != "" {
		q.dead = true
		q.buf, q.spare, q.held = nil, nil, nil
		q.pending.Store(false)
		q.mu.Unlock()
		switch {
		case subscriber:
			s.stats.pubsubLimit.Add(1)
		case q.c.monitoring.Load():
			s.stats.outputLimit.Add(1) // a monitor's lines are its output (S60)
		}
		s.log.Warn("client output buffer limit reached: a client does not read its pushes (messages, invalidations, MONITOR lines) fast enough; closing its connection",
			zap.Int64("client", q.c.id), zap.Int64("unsent_bytes", total), zap.String("limit", why))
		q.c.nc.Close()
		return false
	}
	q.used.Store(true)
	if first != 0 {
		q.buf = append(q.buf, first)
	}
	q.buf = append(q.buf, b...)
	q.pending.Store(true)
	if o := q.c.out; o != nil && o.idle.Load() {
		listed := q.listed
		q.listed = true
		q.mu.Unlock()
		if !listed {
			q.c.s.push.list(q)
		}
		return true
	}
	q.mu.Unlock()
	q.c.out.Wake()
	return true
}

// overLimit says which limit total passes, or "": the hard one, or the
// soft one for longer than its seconds. Called with mu held.
func (q *pushQueue) overLimit(total int64, cf *runtimeConfig) string {
	hard, soft, softFor := cf.pubsubHard.Load(), cf.pubsubSoft.Load(), time.Duration(math.MaxInt64)
	if secs := cf.pubsubSoftSeconds.Load(); secs < int64(softFor/time.Second) {
		softFor = time.Duration(secs) * time.Second // else: longer than a Duration holds, for ever
	}
	if hard > 0 && total > hard {
		return "hard"
	}
	if soft <= 0 || total <= soft {
		q.overSince = time.Time{}
		return ""
	}
	now := time.Now()
	if q.overSince.IsZero() {
		q.overSince = now
		return ""
	}
	if now.Sub(q.overSince) > softFor {
		return "soft"
	}
	return ""
}

// drainPushes writes the queued pushes into c's replies (its goroutine,
// before a flush).
func (c *conn) drainPushes() {
	q := c.push
	if q == nil || !q.pending.Load() {
		return
	}
	c.out.own() // the pusher leaves the queue to c from now on
	q.mu.Lock()
	b := q.buf
	q.buf = q.spare[:0]
	q.spare = nil
	q.pending.Store(false)
	q.mu.Unlock()
	defer c.w.Mute(c.w.Mute(false)) // a push is sent under CLIENT REPLY OFF, as by redis-server 7.0
	c.w.Raw(b)
	if cap(b) <= 1<<20 {
		q.mu.Lock()
		if !q.dead {
			q.spare = b[:0]
		}
		q.mu.Unlock()
	}
}

// leavePushes ends c's subscriptions and tracking as it closes.
func (c *conn) leavePushes() {
	q := c.push
	if q == nil {
		return
	}
	c.gone.Store(true)
	c.leaveMonitor()
	c.s.ps.Leave(q)
	c.s.trk.forget(c)
	q.mu.Lock()
	q.dead = true
	q.buf, q.spare, q.held = nil, nil, nil
	q.mu.Unlock()
}
