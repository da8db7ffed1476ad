package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// errOutputLimit closes a connection whose unsent replies outgrew
// Options.MaxOutputBytes.
var errOutputLimit = errors.New("server: client output buffer limit reached")

// flushPolls counts the waits of every Flush (a test checks that they do
// not spin).
var flushPolls atomic.Int64

// errShutdown ends a read that was waiting to send replies when the server
// began to close; like the read deadline Server.Close sets, it lets the
// connection flush and go.
var errShutdown = fmt.Errorf("server: shutting down: %w", os.ErrDeadlineExceeded)

// outConn is a client socket as a connection's Reader and Writer see it
// (S12). A reply the socket cannot take at once is kept in spill, and the
// connection goes on reading requests; only when no request is waiting does
// it wait, for the socket to become readable or writable, whichever comes
// first. So a client that writes a long pipeline before it reads any reply
// (go-redis does) never deadlocks with us, each side blocked writing to the
// other, as long as the replies fit MaxOutputBytes; redis-server buffers
// them the same way.
type outConn struct {
	nc       net.Conn
	rc       syscall.RawConn
	spill    []byte // unsent reply bytes, in order
	off      int    // spill[:off] is sent
	limit    int
	maxLimit int  // limit once authenticated (MaxOutputBytes)
	over     bool // spill passed limit: the connection closes without sending it
	// closeWait bounds Flush, the last send before the socket closes.
	closeWait time.Duration
	// closing makes a wait give up (Server.Close; the socket's deadlines
	// do not reach poll).
	closing atomic.Bool
	// wakes is set once the connection takes pushes (pushes.go): then a
	// read deadline that is not Close's is a Wake, which ends the wait for
	// input with nothing read so that the pushes go out; wakeSet is a
	// Wake not yet seen. unsent mirrors pending() for other goroutines
	// (a publisher checks a subscriber's output limit).
	wakes   atomic.Bool
	wakeSet atomic.Bool
	unsent  atomic.Int64
	// direct is the push queue's lock once the connection takes pushes;
	// idle, set and cleared under it, lets the server's pusher write to
	// the socket (pushwrite.go). diov, dn and derr are its write's
	// argument and results (under direct), dwriteFn made once.
	direct   *sync.Mutex
	idle     atomic.Bool
	diov     unix.Iovec
	dn       int
	derr     error
	dwriteFn func(uintptr) bool

	// The raw callbacks' arguments and results: method values made once,
	// so that a write or read allocates nothing.
	iov             []unix.Iovec
	rdBuf           []byte
	n               int
	err             error
	writeFn, readFn func(uintptr) bool
	idleFn          func(uintptr) bool
	get             func() []byte // ReadIdle's buffer source and sink
	put             func([]byte)

	io ioCounters // the socket's traffic, for INFO (netstats.go)
}

// newOutConn wraps nc, or returns nil if it is not a socket (net.Pipe in
// tests): such a connection is used directly.
func newOutConn(nc net.Conn, limit int, closeWait time.Duration) *outConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	o := &outConn{nc: nc, rc: rc, limit: limit, maxLimit: limit, closeWait: closeWait}
	o.writeFn, o.readFn, o.idleFn, o.dwriteFn = o.writeRaw, o.readRaw, o.idleRaw, o.directRaw
	return o
}

func (o *outConn) pending() int { return len(o.spill) - o.off }

// preAuthOutput bounds the unsent replies of a connection that has not
// authenticated yet: its requests get short errors, and without a bound a
// client that never reads could make a few kilobytes of requests hold
// MaxOutputBytes of NOAUTH replies.
const preAuthOutput = 64 << 10

// SetPreAuth selects the limit of a connection before AUTH (preAuthOutput)
// or after (MaxOutputBytes). A nil outConn ignores it.
func (o *outConn) SetPreAuth(pre bool) {
	if o == nil {
		return
	}
	if pre {
		o.limit = min(o.maxLimit, preAuthOutput)
	} else {
		o.limit = o.maxLimit
	}
}

// WriteBuffers writes bufs in order (one writev) without waiting: what the
// socket does not take now joins spill. bufs is consumed.
func (o *outConn) WriteBuffers(bufs *net.Buffers) error {
	o.own()
	defer o.clearIov()
	if o.pending() > 0 {
		for _, b := range *bufs {
			o.spill = append(o.spill, b...)
		}
		*bufs = (*bufs)[:0]
		if err := o.trySpill(); err != nil {
			return err
		}
		o.unsent.Store(int64(o.pending()))
		return o.checkLimit()
	}
	total := 0
	for _, b := range *bufs {
		total += len(b)
	}
	// Write until done, waiting for the socket while no request is
	// waiting (the client reads its replies); once one is, keep the rest.
	sent := 0
	for sent < total {
		o.setIov(*bufs, sent)
		if err := o.rc.Write(o.writeFn); err != nil {
			return err
		}
		if o.err != nil {
			return o.err
		}
		if sent += o.n; sent == total {
			break
		}
		in, err := o.waitEvents(true)
		if err != nil {
			return err
		}
		if in {
			break
		}
	}
	if sent < total {
		for _, b := range *bufs {
			if sent >= len(b) {
				sent -= len(b)
				continue
			}
			o.spill = append(o.spill, b[sent:]...)
			sent = 0
		}
	}
	*bufs = (*bufs)[:0]
	o.unsent.Store(int64(o.pending()))
	return o.checkLimit()
}

// clearIov drops iov's references (to shared values and to spill), the
// whole backing array: an earlier, longer write may have used more of it.
func (o *outConn) clearIov() {
	clear(o.iov[:cap(o.iov)])
	o.iov = o.iov[:0]
}

// setIov points iov at bufs past their first skip bytes.
func (o *outConn) setIov(bufs net.Buffers, skip int) {
	o.iov = o.iov[:0]
	for _, b := range bufs {
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		b, skip = b[skip:], 0
		o.iov = append(o.iov, unix.Iovec{Base: &b[0]})
		o.iov[len(o.iov)-1].SetLen(len(b))
	}
}

// Write is WriteBuffers of one slice.
func (o *outConn) Write(p []byte) (int, error) {
	bufs := net.Buffers{p}
	if err := o.WriteBuffers(&bufs); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (o *outConn) checkLimit() error {
	if o.pending() > o.limit {
		o.over = true
		return o.limitErr()
	}
	return nil
}

func (o *outConn) limitErr() error {
	return fmt.Errorf("%w: %d bytes of replies unsent, limit %d", errOutputLimit, o.pending(), o.limit)
}

// trySpill sends what it can of spill without waiting.
func (o *outConn) trySpill() error {
	o.own()
	defer o.clearIov()
	for o.pending() > 0 {
		p := o.spill[o.off:]
		o.iov = append(o.iov[:0], unix.Iovec{Base: &p[0]})
		o.iov[0].SetLen(len(p))
		if err := o.rc.Write(o.writeFn); err != nil {
			return err
		}
		if o.err != nil {
			return o.err
		}
		if o.n == 0 {
			break
		}
		o.off += o.n
	}
	if o.pending() == 0 {
		if cap(o.spill) > 1<<20 {
			o.spill = nil // do not keep a burst's buffer for the connection's life
		}
		o.spill, o.off = o.spill[:0], 0
	}
	o.unsent.Store(int64(o.pending()))
	return nil
}

// Read reads a request. While replies are unsent it takes whatever has
// arrived; with nothing to read it waits for the socket to become
// readable or writable, sends what it can, and tries again.
func (o *outConn) Read(p []byte) (int, error) {
	if o.over {
		return 0, o.limitErr()
	}
	for o.pending() > 0 {
		if err := o.trySpill(); err != nil {
			return 0, err
		}
		if o.pending() == 0 {
			break
		}
		n, eof, err := o.readNow(p)
		switch {
		case o.interrupted(err):
			return 0, nil
		case err != nil:
			return 0, err
		case n > 0:
			return n, nil
		case eof:
			return 0, io.EOF
		}
		if o.closing.Load() {
			return 0, errShutdown
		}
		if _, err := o.waitEvents(true); err != nil {
			return 0, err
		}
	}
	n, err := o.nc.Read(p)
	o.io.read(n)
	if n == 0 && o.interrupted(err) {
		return 0, nil
	}
	return n, err
}

// Wake ends the connection's wait for input, from any goroutine: the read
// returns nothing, and the Reader's BeforeBlock (conn.flush, which sends
// the queued pushes) runs before it reads again. A read deadline in the
// past is what reaches a read parked in the poller; wakeSet keeps it to
// one until the connection saw it. A nil outConn ignores it.
func (o *outConn) Wake() {
	if o != nil && o.wakeSet.CompareAndSwap(false, true) {
		o.nc.SetReadDeadline(time.Unix(1, 0))
	}
}

// interrupted reports whether err is a Wake's deadline rather than
// Close's: then the deadline is cleared. Close sets closing before its
// deadline, so a Close that races with the clearing is seen by the check
// after it, and its deadline set again.
func (o *outConn) interrupted(err error) bool {
	if err == nil || !o.wakes.Load() || !errors.Is(err, os.ErrDeadlineExceeded) || o.closing.Load() {
		return false
	}
	// The deadline is cleared before wakeSet: a Wake between the two finds
	// wakeSet still set and sets no deadline, but its push was queued
	// before, so the drain that follows this read sends it; a Wake after
	// both sets a deadline that stays. (The other order could clear a
	// later Wake's deadline and leave wakeSet set, and no Wake would reach
	// the connection again.)
	o.nc.SetReadDeadline(time.Time{})
	o.wakeSet.Store(false)
	if o.closing.Load() {
		o.nc.SetReadDeadline(time.Unix(1, 0))
		return false
	}
	return true
}

// ReadIdle reads a request into b, holding no buffer while it waits: a
// read that finds nothing gives b back with put, and once the poller
// reports input the next read takes a buffer from get. It returns the
// buffer read into (nil after an error while waiting). A read in the
// poller's callback sees input that arrived at any time before it, so
// no readiness is lost between the last empty read and the wait. With
// replies unsent it is Read, which sends them as it waits.
func (o *outConn) ReadIdle(b []byte, get func() []byte, put func([]byte)) ([]byte, int, error) {
	if o.over || o.pending() > 0 {
		n, err := o.Read(b)
		return b, n, err
	}
	o.rdBuf, o.get, o.put = b, get, put
	err := o.rc.Read(o.idleFn)
	b = o.rdBuf
	o.rdBuf, o.get, o.put = nil, nil, nil
	switch {
	case o.interrupted(err):
		return b, 0, nil
	case err != nil:
		return b, 0, err
	case o.err != nil:
		return b, 0, o.err
	case o.n == -1:
		return b, 0, io.EOF
	}
	return b, o.n, nil
}

// idleRaw is ReadIdle's read: done once it read bytes, the peer's close
// or an error; with nothing yet, the buffer goes back and the poller
// waits.
func (o *outConn) idleRaw(fd uintptr) bool {
	if o.rdBuf == nil {
		o.rdBuf = o.get()
	}
	var eof bool
	o.n, eof, o.err = readNonblock(int(fd), o.rdBuf)
	o.io.read(o.n)
	switch {
	case eof:
		o.n = -1
	case o.n == 0 && o.err == nil:
		o.put(o.rdBuf)
		o.rdBuf = nil
		return false
	}
	return true
}

// Flush sends what is left of spill before the socket closes, for at most
// closeWait. Requests that still arrive are read and dropped (the
// connection answers nothing more): a client blocked writing them can
// finish and then read its replies. Once the client closed its side it
// waits for writability only, so a pending EOF does not make it spin.
func (o *outConn) Flush() error {
	o.own()
	deadline := time.Now().Add(o.closeWait)
	inEOF := false
	var sink []byte
	for o.pending() > 0 && !o.over {
		if err := o.trySpill(); err != nil {
			return err
		}
		if o.pending() == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server: %d bytes of replies unsent when the connection closed: the client read none for %v", o.pending(), o.closeWait)
		}
		if !inEOF {
			if sink == nil {
				sink = make([]byte, 64<<10)
			}
			n, eof, err := o.readNow(sink)
			switch {
			case err != nil:
				return err
			case eof:
				inEOF = true
			case n > 0:
				continue // more may be waiting; send and read again
			}
		}
		flushPolls.Add(1)
		if _, err := o.waitEvents(!inEOF); err != nil {
			return err
		}
	}
	return nil
}

// readNow reads what has arrived without waiting: 0 bytes if nothing has,
// eof if the peer closed.
func (o *outConn) readNow(p []byte) (n int, eof bool, err error) {
	o.rdBuf = p
	err = o.rc.Read(o.readFn)
	o.rdBuf = nil
	switch {
	case err != nil:
		return 0, false, err
	case o.err != nil:
		return 0, false, o.err
	case o.n == -1:
		return 0, true, nil
	}
	return o.n, false, nil
}

func (o *outConn) writeRaw(fd uintptr) bool {
	o.n, o.err = writevNonblock(int(fd), o.iov)
	o.io.wrote(o.n)
	return true
}

func (o *outConn) readRaw(fd uintptr) bool {
	var eof bool
	o.n, eof, o.err = readNonblock(int(fd), o.rdBuf)
	o.io.read(o.n)
	if eof {
		o.n = -1
	}
	return true
}

// waitEvents blocks until the socket is writable, or readable too if
// read, for at most pollSliceMs, so that closing is seen; in reports that
// a request (or the peer's close) is waiting to be read.
func (o *outConn) waitEvents(read bool) (in bool, err error) {
	var perr error
	err = o.rc.Control(func(fd uintptr) { in, perr = pollFor(int(fd), read, pollSliceMs) })
	if err != nil {
		return false, err
	}
	return in, perr
}

// pollSliceMs bounds one wait for the socket.
const pollSliceMs = 100
