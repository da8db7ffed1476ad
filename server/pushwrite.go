package server

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Pushes to an idle connection are written by the server's pusher, not
// by the connection's goroutine, as redis-server writes its clients'
// reply buffers before its event loop sleeps: no connection wakes for
// them, and one write carries every message queued for a subscriber
// since its last one (S32). Idle means the connection waits for its next
// request with every reply and push sent (markIdle, from the Reader's
// BeforeBlock); no command of it runs, so a push overtakes neither a
// reply nor an earlier push (a tracking invalidation never precedes the
// reply that read the key). Deliver queues the push, and lists the queue
// with the pusher if it was not listed yet; the pusher writes the queue
// without waiting; what the socket does not take stays queued and the
// connection is woken to send it. The connection's goroutine ends idle
// (outConn.own) as a command starts and before it writes anything
// itself, then sends what is queued before its reply. Idle is set, ended
// and tested under the push queue's lock, which a direct write holds.

// directPushes counts the queues the pusher wrote whole (a test checks
// that an idle subscriber's messages go so).
var directPushes atomic.Int64

// pusher writes the queues of idle connections.
type pusher struct {
	mu           sync.Mutex
	listed, done []*pushQueue // to write; the slice last written, for reuse
	kick         chan struct{}
	stop, ended  chan struct{}
}

func newPusher() *pusher {
	p := &pusher{kick: make(chan struct{}, 1), stop: make(chan struct{}), ended: make(chan struct{})}
	go p.loop()
	return p
}

// list has q written soon (q.listed was false; q.mu is not held).
func (p *pusher) list(q *pushQueue) {
	p.mu.Lock()
	p.listed = append(p.listed, q)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *pusher) loop() {
	defer close(p.ended)
	for {
		select {
		case <-p.stop:
			return
		case <-p.kick:
		}
		// The connections ready to run go first, so that what they publish
		// joins this write.
		runtime.Gosched()
		p.mu.Lock()
		qs := p.listed
		p.listed = p.done[:0]
		p.mu.Unlock()
		for i, q := range qs {
			q.writeIdle()
			qs[i] = nil
		}
		p.mu.Lock()
		p.done = qs[:0]
		p.mu.Unlock()
	}
}

func (p *pusher) close() {
	close(p.stop)
	<-p.ended
}

// writeIdle sends the queue if its connection is still idle; otherwise
// the connection sends it.
func (q *pushQueue) writeIdle() {
	o := q.c.out
	q.mu.Lock()
	q.listed = false
	if !o.idle.Load() || len(q.buf) == 0 {
		q.mu.Unlock()
		return
	}
	n, err := o.writeDirect(q.buf)
	switch {
	case err != nil: // the connection is closing: it finds out as it reads
		q.buf = q.buf[:0]
		q.pending.Store(false)
	case n == len(q.buf):
		q.buf = q.buf[:0]
		q.pending.Store(false)
		directPushes.Add(1)
	default:
		q.buf = q.buf[:copy(q.buf, q.buf[n:])]
		o.idle.Store(false)
		q.mu.Unlock()
		o.Wake()
		return
	}
	q.mu.Unlock()
}

// beforeRead is the Reader's BeforeBlock: the replies and pushes so far
// go out, then the pusher may write to the socket while the connection
// waits.
func (c *conn) beforeRead() error {
	c.observePending(nil) // the commands before the read are observed before it
	if err := c.flush(); err != nil {
		return err
	}
	c.markIdle()
	c.showIdle()
	return nil
}

// markIdle sets idle if c takes pushes and nothing of it is unsent.
func (c *conn) markIdle() {
	q, o := c.push, c.out
	if o == nil || !q.used.Load() || o.idle.Load() || o.over || o.pending() > 0 || c.w.Buffered() > 0 {
		return
	}
	q.mu.Lock()
	if len(q.buf) == 0 && !q.dead {
		o.idle.Store(true)
	}
	q.mu.Unlock()
}

// endIdle ends the idle of a blocked command's wait: the pusher stops
// writing to the socket, and what it left queued goes before the reply.
func (c *conn) endIdle() {
	c.out.own()
	if c.push.pending.Load() {
		c.drainPushes()
	}
}

// own ends idle: once it returns the pusher is not writing to the
// socket, nor will it until the next markIdle. A nil outConn ignores it.
func (o *outConn) own() {
	if o != nil && o.idle.Load() {
		o.direct.Lock()
		o.idle.Store(false)
		o.direct.Unlock()
	}
}

// writeDirect writes b to the socket without waiting and returns how
// many bytes it took. Called with direct held and idle set; an error
// ends idle.
func (o *outConn) writeDirect(b []byte) (int, error) {
	o.diov = unix.Iovec{Base: unsafe.SliceData(b)}
	o.diov.SetLen(len(b))
	err := o.rc.Write(o.dwriteFn)
	if err == nil {
		err = o.derr
	}
	n := o.dn
	o.diov, o.derr = unix.Iovec{}, nil
	if err != nil {
		o.idle.Store(false)
		return 0, err
	}
	return n, nil
}

// directRaw is writeDirect's write.
func (o *outConn) directRaw(fd uintptr) bool {
	o.dn, o.derr = writevNonblock(int(fd), unsafe.Slice(&o.diov, 1))
	o.io.wrote(o.dn)
	return true
}
