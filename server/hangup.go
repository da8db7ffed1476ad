package server

import (
	"sync/atomic"
	"syscall"
	"time"
)

// watchHangup reports on hup when the client of a blocked connection
// closes its end, without reading its requests: a goroutine waits in the
// runtime's poller for the socket to become readable and peeks
// (peekHangup). Requests pipelined behind the blocking command make it
// readable too; the watch then goes on waiting (the poller's next edge is
// more requests or the close), so a client that pipelined a request and
// closed is not served a pop it can no longer read (S121). stop ends the
// watch (by a read deadline, then restored) and returns once the
// goroutine has.
func (c *conn) watchHangup() (hup <-chan struct{}, stop func()) {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return nil, func() {}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, func() {}
	}
	h := make(chan struct{})
	done := make(chan struct{})
	var stopping atomic.Bool
	go func() {
		defer close(done)
		eof := false
		for {
			err := rc.Read(func(fd uintptr) bool {
				var ready bool
				eof, ready = peekHangup(int(fd))
				return ready
			})
			// A push's Wake (its read deadline) while the command waits
			// does not end the watch: the push goes out after the command,
			// and a hangup meanwhile must still be seen
			// (TestBlockedHangupAfterAPush).
			if eof || stopping.Load() || c.out == nil || !c.out.interrupted(err) {
				break
			}
		}
		if eof {
			close(h)
		}
	}()
	return h, func() {
		select {
		case <-done:
		default:
			stopping.Store(true)
			c.nc.SetReadDeadline(time.Now())
			<-done
			c.nc.SetReadDeadline(time.Time{})
			if c.s.isClosed() {
				c.nc.SetReadDeadline(time.Now()) // Close's deadline is not lost
			}
			if c.out != nil && c.out.wakeSet.Load() {
				// A Wake between the two deadlines above had its deadline
				// cleared; wakeSet stays set until a read sees one, so set
				// it again, or no later Wake would reach the connection.
				c.nc.SetReadDeadline(time.Unix(1, 0))
			}
		}
	}
}
