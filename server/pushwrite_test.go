package server

import (
	"strconv"
	"testing"
	"time"
)

// TestIdleSubscriberWrittenDirectly (S32): the pusher writes the messages
// of an idle subscriber (its connection waits for input), RESP2 and RESP3
// framed, in order, and a subscriber's own replies (PING in subscribed
// mode) keep their place among them.
func TestIdleSubscriberWrittenDirectly(t *testing.T) {
	_, path := startServer(t, nil)
	r2, r3, pub := dialPeer(t, path), dialPeer(t, path), dialPeer(t, path)
	r3.do("HELLO", "3")
	r2.do("SUBSCRIBE", "c")
	r3.do("SUBSCRIBE", "c")
	const count = 300
	before := directPushes.Load()
	for i := range count {
		if got := pub.do("PUBLISH", "c", strconv.Itoa(i)); got != ":2\r\n" {
			t.Fatalf("PUBLISH %d answered %q", i, got)
		}
		v := strconv.Itoa(i)
		body := "$7\r\nmessage\r\n$1\r\nc\r\n$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n"
		if got := r2.read(5 * time.Second); got != "*3\r\n"+body {
			t.Fatalf("RESP2 message %d: %q", i, got)
		}
		if got := r3.read(5 * time.Second); got != ">3\r\n"+body {
			t.Fatalf("RESP3 message %d: %q", i, got)
		}
		if i == count/2 {
			if got := r2.do("PING"); got != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
				t.Fatalf("RESP2 PING in subscribed mode: %q", got)
			}
			if got := r3.do("PING"); got != "+PONG\r\n" {
				t.Fatalf("RESP3 PING: %q", got)
			}
		}
	}
	// Each message was read before the next was published, so each is a
	// write of its own; only a subscriber's first push wakes its
	// connection (it was not idle yet).
	if n := directPushes.Load() - before; n < 2*count-4 {
		t.Errorf("the pusher wrote %d of %d messages, want all but the first of each subscriber", n, 2*count)
	}
}

// TestPubSubSoftSecondsHuge (S35): a soft_seconds CONFIG SET takes (any
// number that fits a long long, as Redis's) is a wait no subscriber
// outlives, not one that overflows into an immediate close.
func TestPubSubSoftSecondsHuge(t *testing.T) {
	var cf runtimeConfig
	cf.pubsubSoft.Store(10)
	cf.pubsubSoftSeconds.Store(10_000_000_000)
	var q pushQueue
	for i := range 3 {
		if why := q.overLimit(100, &cf); why != "" {
			t.Fatalf("check %d over a soft limit of 10 billion seconds: closed for %q", i, why)
		}
		time.Sleep(time.Millisecond)
	}
}
