package server

import (
	"strconv"
	"testing"
	"time"
)

// TestIdleSubscriberWrittenDirectly (S32): a publisher writes each
// message straight to an idle subscriber's socket (no wakeup of its
// connection), RESP2 and RESP3 framed, in order, and a subscriber's own
// replies (PING in subscribed mode) keep their place among them.
func TestIdleSubscriberWrittenDirectly(t *testing.T) {
	_, path := startServer(t, nil)
	r2, r3, pub := dialPeer(t, path), dialPeer(t, path), dialPeer(t, path)
	r3.do("HELLO", "3")
	r2.do("SUBSCRIBE", "c")
	r3.do("SUBSCRIBE", "c")
	const count = 500
	before := directPushes.Load()
	for i := range count {
		if got := pub.do("PUBLISH", "c", strconv.Itoa(i)); got != ":2\r\n" {
			t.Fatalf("PUBLISH %d answered %q", i, got)
		}
		if i == count/2 {
			r2.send("PING")
			r3.send("PING")
			time.Sleep(20 * time.Millisecond) // the PINGs are answered before the next message
		}
	}
	for i := range count {
		v := strconv.Itoa(i)
		body := "$7\r\nmessage\r\n$1\r\nc\r\n$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n"
		if got := r2.read(5 * time.Second); got != "*3\r\n"+body {
			t.Fatalf("RESP2 message %d: %q", i, got)
		}
		if got := r3.read(5 * time.Second); got != ">3\r\n"+body {
			t.Fatalf("RESP3 message %d: %q", i, got)
		}
		if i == count/2 {
			if got := r2.read(5 * time.Second); got != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
				t.Fatalf("RESP2 PING in subscribed mode: %q", got)
			}
			if got := r3.read(5 * time.Second); got != "+PONG\r\n" {
				t.Fatalf("RESP3 PING: %q", got)
			}
		}
	}
	// Each subscriber's connection waits for input between messages: all
	// but the first few go straight to its socket.
	if n := directPushes.Load() - before; n < count {
		t.Errorf("%d of %d messages written directly, want most", n, 2*count)
	}
}
