package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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

// TestOutputSpill (S12): a client that writes a long pipeline before it
// reads any reply gets every reply, in order, though the replies outgrow
// the socket's buffers many times over while it is still writing.
func TestOutputSpill(t *testing.T) {
	_, path := startServer(t, nil)
	r := dialRaw(t, path)
	val := strings.Repeat("v", 64<<10)
	r.cmd("SET", "big", val)
	if got := r.reply(); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
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
	r.cmd("SET", "big", strings.Repeat("v", 64<<10))
	if got := r.reply(); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
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
