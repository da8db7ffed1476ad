package server

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A publisher writes a push straight to the socket of a connection that
// is idle, as redis-server's event loop writes each client's reply
// buffer: no goroutine wakes for it (S32). Idle means the connection
// waits for its next request with every reply sent and no push queued
// (markIdle, from the Reader's BeforeBlock), so the push can overtake
// neither a reply nor an earlier push, and no command of the connection
// is running (a tracking invalidation never precedes the reply that read
// the key). The write never waits: what the socket does not take now is
// queued and the connection woken to send it (pushQueue.deliver). The
// connection's goroutine ends idle (outConn.own) as a command starts and
// before it writes anything itself; idle is set, ended and tested under
// the push queue's lock, which a direct write holds.

// directPushes counts the pushes written whole by their publisher (a
// test checks that an idle subscriber gets them so).
var directPushes atomic.Int64

// pushMark is the first byte of a RESP3 push (a direct write's first
// iovec points at it).
var pushMark = [1]byte{'>'}

// beforeRead is the Reader's BeforeBlock: the replies and pushes so far
// go out, then publishers may write to the socket while the connection
// waits.
func (c *conn) beforeRead() error {
	if err := c.flush(); err != nil {
		return err
	}
	c.markIdle()
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

// own ends idle: once it returns no publisher is writing to the socket,
// nor will one until the next markIdle. A nil outConn ignores it.
func (o *outConn) own() {
	if o != nil && o.idle.Load() {
		o.direct.Lock()
		o.idle.Store(false)
		o.direct.Unlock()
	}
}

// writeDirect writes first (unless 0) then b to the socket without
// waiting, and returns how many of those bytes it took. Called with
// direct held and idle set; an error ends idle (the connection finds the
// failure itself as it reads).
func (o *outConn) writeDirect(first byte, b []byte) (int, error) {
	n := 0
	if first != 0 {
		o.diov[0] = unix.Iovec{Base: &pushMark[0]}
		o.diov[0].SetLen(1)
		n = 1
	}
	o.diov[n] = unix.Iovec{Base: unsafe.SliceData(b)}
	o.diov[n].SetLen(len(b))
	o.dn = n + 1
	err := o.rc.Write(o.dwriteFn)
	if err == nil {
		err = o.derr
	}
	n, o.derr = o.dn, nil
	o.diov = [2]unix.Iovec{}
	if err != nil {
		o.idle.Store(false)
		return 0, err
	}
	return n, nil
}

// directRaw is writeDirect's writev: dn iovecs in, bytes taken out.
func (o *outConn) directRaw(fd uintptr) bool {
	o.dn, o.derr = writevNonblock(int(fd), o.diov[:o.dn])
	return true
}
