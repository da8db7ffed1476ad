package server

import (
	"crypto/sha1"
	"encoding/hex"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// TestShutdown checks S53: SHUTDOWN's syntax and errors are Redis's and
// change nothing; in MULTI it is refused before queueing (EXEC aborts), in
// a script refused; it calls Options.Shutdown once and closes the
// connection without a reply; with no Options.Shutdown it answers an
// error and the connection goes on.
func TestShutdown(t *testing.T) {
	var calls atomic.Int32
	_, path := startServer(t, func(o *Options) { o.Shutdown = func() { calls.Add(1) } })
	c := dialRaw(t, path)
	const script = "return redis.call('shutdown')"
	sum := sha1.Sum([]byte(script))
	c.expect([]step{
		{[]string{"SET", "k", "v"}, "+OK"},
		{[]string{"SHUTDOWN", "SAVE", "NOSAVE"}, "-ERR syntax error"},
		{[]string{"SHUTDOWN", "NOW", "LATER"}, "-ERR syntax error"},
		{[]string{"SHUTDOWN", "ABORT", "NOW"}, "-ERR syntax error"},
		{[]string{"SHUTDOWN", "abort"}, "-ERR No shutdown in progress."},
		{[]string{"SHUTDOWN", "ABORT", "abort"}, "-ERR No shutdown in progress."}, // a flag twice is no error in Redis
		{[]string{"SHUTDOWN", "NOSAVE", "nosave", "ABORT"}, "-ERR syntax error"},
		{[]string{"EVAL", script, "0"}, "-" + errScriptNoScript + " script: " + hex.EncodeToString(sum[:]) + ", on @user_script:1."},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"SHUTDOWN"}, "-ERR Command not allowed inside a transaction"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors."},
		{[]string{"GET", "k"}, "$v"},
	})
	if n := calls.Load(); n != 0 {
		t.Fatalf("Options.Shutdown called %d times by refused SHUTDOWNs", n)
	}
	c.cmd("SHUTDOWN", "NOSAVE", "NOW", "FORCE")
	c.expectClosed()
	if n := calls.Load(); n != 1 {
		t.Errorf("Options.Shutdown called %d times, want 1", n)
	}

	_, path = startServer(t, nil)
	c = dialRaw(t, path)
	c.expect([]step{
		{[]string{"SHUTDOWN"}, "-" + errNoShutdownHook},
		{[]string{"PING"}, "+PONG"},
	})
}

// TestShutdownDuringBusyScript checks S53 beside a script past
// busy-reply-threshold: SHUTDOWN and SHUTDOWN SAVE answer redis-server's
// BUSY (only NOSAVE may stop a server whose script is running, since what
// the script did so far would be kept) and call nothing; SHUTDOWN NOSAVE
// calls Options.Shutdown and closes the connection.
func TestShutdownDuringBusyScript(t *testing.T) {
	var calls atomic.Int32
	p := newPeers(t, 2, 2, func(o *Options) {
		o.Shutdown = func() { calls.Add(1) }
		o.ShutdownTimeout = 200 * time.Millisecond // Close ends the endless script after it
	})
	for _, side := range [][]*rawPeer{p.ours, p.peer} {
		side[1].do("CONFIG", "SET", "busy-reply-threshold", "100")
		side[0].send("EVAL", "local i = 0; while true do i = i + 1 end", "0")
	}
	time.Sleep(300 * time.Millisecond)
	p.same(1, "SHUTDOWN")
	p.same(1, "SHUTDOWN", "SAVE", "NOW")
	if n := calls.Load(); n != 0 {
		t.Fatalf("Options.Shutdown called %d times by SHUTDOWNs refused as BUSY", n)
	}
	o := p.ours[1]
	o.send("SHUTDOWN", "NOSAVE")
	o.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := o.br.ReadByte(); err != io.EOF {
		t.Fatalf("SHUTDOWN NOSAVE during a busy script: read %q, %v; want the connection closed", b, err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("SHUTDOWN NOSAVE during a busy script called Options.Shutdown %d times, want 1", n)
	}
}

// TestShutdownWhileLoading checks S53 before the cache is open: SHUTDOWN
// is served (not -LOADING), calls Options.Shutdown and closes its
// connection; what the process then does is its own (cmd/tiercache stops
// once the open returns, as on SIGTERM).
func TestShutdownWhileLoading(t *testing.T) {
	var calls atomic.Int32
	o := Options{UnixSocket: shortSocket(t), ShutdownTimeout: 2 * time.Second, Shutdown: func() { calls.Add(1) }}
	s, err := NewLoading(o, func() LoadProgress { return LoadProgress{} })
	if err != nil {
		t.Fatal(err)
	}
	startClosed(t, s)
	c, other := dialRaw(t, o.UnixSocket), dialRaw(t, o.UnixSocket)
	c.expect([]step{{[]string{"GET", "k"}, "-LOADING Redis is loading the dataset in memory"}})
	c.cmd("SHUTDOWN")
	c.expectClosed()
	if n := calls.Load(); n != 1 {
		t.Errorf("SHUTDOWN while loading called Options.Shutdown %d times, want 1", n)
	}
	other.expect([]step{{[]string{"PING"}, "+PONG"}})
}
