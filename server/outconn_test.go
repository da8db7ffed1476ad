package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pipelineGets writes n GETs of key in one go, without reading, from a
// goroutine; the returned channel gets the write's error.
func pipelineGets(r *rawConn, key string, n int) <-chan error {
	req := strings.Repeat(fmt.Sprintf("*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key), n)
	done := make(chan error, 1)
	go func() {
		_, err := r.nc.Write([]byte(req))
		done <- err
	}()
	return done
}

// setBig stores a 64 KiB value under "big" and returns it.
func setBig(t *testing.T, r *rawConn) string {
	t.Helper()
	val := strings.Repeat("v", 64<<10)
	r.cmd("SET", "big", val)
	if got := r.reply(); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	return val
}

// TestOutputSpill (S12): a client that writes a long pipeline before it
// reads any reply gets every reply, in order, though the replies outgrow
// the socket's buffers many times over while it is still writing.
func TestOutputSpill(t *testing.T) {
	_, path := startServer(t, nil)
	r := dialRaw(t, path)
	val := setBig(t, r)
	// 400 GETs of a 64 KiB value, each followed by a 4000-byte PING (1.6 MB
	// of requests, more than the socket holds): 26 MB of replies.
	const n = 400
	pad := strings.Repeat("p", 4000)
	req := strings.Repeat(fmt.Sprintf("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n*2\r\n$4\r\nPING\r\n$%d\r\n%s\r\n", len(pad), pad), n)
	done := make(chan error, 1)
	go func() {
		_, err := r.nc.Write([]byte(req))
		done <- err
	}()
	br := bufio.NewReaderSize(r.nc, 1<<20)
	want := fmt.Sprintf("$%d\r\n%s\r\n$%d\r\n%s\r\n", len(val), val, len(pad), pad)
	buf := make([]byte, len(want))
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatalf("reply pair %d: %v", i, err)
		}
		if string(buf) != want {
			t.Fatalf("reply pair %d differs", i)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}
}

// TestOutputLimit: replies a client leaves unread while it keeps writing
// are bounded by MaxOutputBytes: past it the server closes that
// connection, and serves the others.
func TestOutputLimit(t *testing.T) {
	s, path := startServer(t, func(o *Options) { o.MaxOutputBytes = 1 << 20 })
	r := dialRaw(t, path)
	setBig(t, r)
	// 20,000 GETs (460 KB of requests, more than the socket holds) of a
	// 64 KiB value: 1.3 GB of replies if all were kept.
	// The client reads nothing until the server gave up on it.
	<-pipelineGets(r, "big", 20000) // the write ends, or fails once the server closed
	for deadline := time.Now().Add(20 * time.Second); s.Stats().OutputLimitCloses == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the connection was not closed at the output limit")
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := io.Copy(io.Discard, r.nc)
	// The server closed with requests unread: EOF or ECONNRESET.
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after the close: read %d bytes, then %v", n, err)
	}
	if n >= 20000*(64<<10) {
		t.Fatalf("read all %d bytes of replies: no limit", n)
	}
	if got := s.Stats().OutputLimitCloses; got != 1 {
		t.Fatalf("Stats().OutputLimitCloses = %d, want 1", got)
	}
	o := dialRaw(t, path)
	o.cmd("PING")
	if got := o.reply(); got != "+PONG" {
		t.Fatalf("PING after the closed client: %q", got)
	}
}

// TestOutputFlushAtClose: replies still unsent when a connection ends are
// sent while the client reads them, without spinning: after a protocol
// error in the middle of a pipeline the client is still writing, and the
// requests after the error are read and dropped so that it can finish; a
// client that closed its writing side (a pending EOF) does not make the
// wait busy. Both get every reply up to the error, then EOF.
func TestOutputFlushAtClose(t *testing.T) {
	_, path := startServer(t, nil)
	r := dialRaw(t, path)
	val := setBig(t, r)
	polls := flushPolls.Load()
	get := "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"
	// 200 GETs (13 MB of replies), a protocol error, then 4 MB more that
	// the server must read and drop while the client is still writing.
	req := strings.Repeat(get, 200) + "*1\r\n$-5\r\n" + strings.Repeat("*1\r\n$4\r\nPING\r\n", 300000)
	done := make(chan error, 1)
	go func() {
		_, err := r.nc.Write([]byte(req))
		if err == nil {
			err = r.nc.(*net.UnixConn).CloseWrite() // a pending EOF while the server still sends
		}
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the server waits to send, with nothing more to read
	br := bufio.NewReaderSize(r.nc, 1<<20)
	want := fmt.Sprintf("$%d\r\n%s\r\n", len(val), val)
	buf := make([]byte, len(want))
	for i := 0; i < 200; i++ {
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != want {
			t.Fatalf("reply %d: %v", i, err)
		}
	}
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "-ERR") {
		t.Fatalf("after the GETs: %q, %v; want the protocol error", line, err)
	}
	if rest, err := io.ReadAll(br); len(rest) != 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("after the error: %d more bytes, %v; want EOF", len(rest), err)
	}
	// Once every reply is out the server closes, as Redis does after a
	// protocol error: a client still writing then gets EPIPE or a reset.
	// Had the server stopped reading while replies were pending, the
	// client would have blocked writing and the replies above never come.
	if err := <-done; err != nil && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the client's write: %v", err)
	}
	// About one poll per 100 ms slice while the client read nothing (and
	// a few while it read); a spinning wait would make thousands.
	if n := flushPolls.Load() - polls; n > 200 {
		t.Fatalf("%d polls while the replies drained: the wait spins", n)
	}
}

// TestOutputLimitBeforeAuth: before AUTH a connection may hold only
// preAuthOutput of unsent replies: a client that never authenticates nor
// reads cannot make its NOAUTH errors hold MaxOutputBytes.
func TestOutputLimitBeforeAuth(t *testing.T) {
	s, path := startServer(t, func(o *Options) { o.RequirePass = "pw"; o.UnixRequireAuth = true })
	r := dialRaw(t, path)
	// 60,000 PINGs: 840 KB of requests, about 3 MB of NOAUTH replies.
	<-func() <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := r.nc.Write([]byte(strings.Repeat("*1\r\n$4\r\nPING\r\n", 60000)))
			done <- err
		}()
		return done
	}()
	for deadline := time.Now().Add(20 * time.Second); s.Stats().OutputLimitCloses == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the unauthenticated connection was not closed at the pre-AUTH output limit")
		}
		time.Sleep(5 * time.Millisecond)
	}
	o := dialRaw(t, path)
	o.cmd("AUTH", "pw")
	if got := o.reply(); got != "+OK" {
		t.Fatalf("AUTH on another connection: %q", got)
	}
}
