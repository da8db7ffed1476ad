package server

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const pushWait = 300 * time.Millisecond

// TestPubSubMatchesRedis (S32): subscription replies, messages, pattern
// messages, PING and the commands refused in RESP2's subscribed mode,
// PUBSUB, with three subscribers, byte for byte as redis-server 7.0, in
// RESP2 and RESP3.
func TestPubSubMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			p := newPeers(t, 4, proto, nil)
			p.same(0, "SUBSCRIBE", "news", "sport")
			p.sameRead(0, pushWait, "second subscribe reply")
			p.same(1, "PSUBSCRIBE", "n*", "s?ort")
			p.sameRead(1, pushWait, "second psubscribe reply")
			p.same(2, "SUBSCRIBE", "news")
			p.same(3, "PUBLISH", "news", "hello")
			p.sameRead(0, pushWait, "message")
			p.sameRead(1, pushWait, "pmessage")
			p.sameRead(2, pushWait, "message")
			p.same(3, "PUBLISH", "sport", "goal")
			p.sameRead(0, pushWait, "message")
			p.sameRead(1, pushWait, "pmessage")
			p.sameRead(2, pushWait, "none")
			p.same(3, "PUBLISH", "nobody", "x")
			p.same(3, "PUBSUB", "NUMSUB", "news", "sport", "none")
			p.same(3, "PUBSUB", "NUMPAT")
			p.same(3, "PUBSUB", "CHANNELS", "sp*")
			p.same(3, "PUBSUB", "NOSUCH")
			p.same(3, "PUBSUB", "channels", "a", "b")
			p.same(3, "PUBSUB", "NUMPAT", "a")
			p.same(3, "PUBSUB", "HELP", "a")
			p.same(0, "PING")
			p.same(0, "PING", "hi")
			p.same(0, "GET", "x")
			p.same(0, "UNSUBSCRIBE", "news")
			p.same(0, "UNSUBSCRIBE", "never")
			p.same(0, "UNSUBSCRIBE")
			p.same(0, "UNSUBSCRIBE")
			p.same(1, "PUNSUBSCRIBE", "n*")
			p.same(1, "PUNSUBSCRIBE")
			p.same(1, "PUNSUBSCRIBE")
			p.same(1, "PING")
			p.same(3, "PUBLISH", "news", "bye")
			p.sameRead(2, pushWait, "message")
			p.sameRead(0, pushWait, "none after unsubscribe")
			p.same(3, "PUBSUB", "NUMPAT")
		})
	}
}

// TestSlowSubscriberIsDisconnected (S32, S58): a subscriber that stops
// reading is closed at client-output-buffer-limit pubsub and counted,
// while the publisher never waits and another subscriber receives every
// message; a shard channel's subscriber (SSUBSCRIBE, SPUBLISH) too.
func TestSlowSubscriberIsDisconnected(t *testing.T) {
	t.Run("channel", func(t *testing.T) { slowSubscriber(t, "SUBSCRIBE", "PUBLISH") })
	t.Run("shard", func(t *testing.T) { slowSubscriber(t, "SSUBSCRIBE", "SPUBLISH") })
}

// slowSubscriber is TestSlowSubscriberIsDisconnected with the given
// subscribe and publish commands.
func slowSubscriber(t *testing.T, subscribe, publish string) {
	s, path := startServer(t, nil)
	admin := dialPeer(t, path)
	admin.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 256kb 1")
	slow, fast := dialPeer(t, path), dialPeer(t, path)
	slow.do(subscribe, "c")
	fast.do(subscribe, "c")
	msg := string(make([]byte, 4096))
	done := make(chan int)
	var got atomic.Int64
	go func() { // the fast subscriber reads everything
		var b []byte
		for {
			fast.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			if readRaw(fast.br, &b) != nil {
				break
			}
			b = b[:0]
			got.Add(1)
		}
		done <- int(got.Load())
	}()
	pub := dialPeer(t, path)
	const count = 4096 // 16 MiB, well past the 1 MiB limit
	start := time.Now()
	for i := 0; i < count; i += 16 { // 64 KiB at a time, the reading subscriber never further behind
		for j := 0; j < 16; j++ {
			pub.send(publish, "c", msg)
		}
		for j := 0; j < 16; j++ {
			pub.read(10 * time.Second)
		}
		for wait := time.Now().Add(10 * time.Second); got.Load() < int64(i) && time.Now().Before(wait); {
			time.Sleep(time.Millisecond)
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("publishing took %v: the slow subscriber held the publisher up", d)
	}
	if got := <-done; got != count {
		t.Errorf("the reading subscriber got %d messages of %d", got, count)
	}
	if got := s.stats.pubsubLimit.Load(); got != 1 {
		t.Errorf("pubsub limit disconnections %d, want 1", got)
	}
	slow.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1<<20)
	for {
		if _, err := slow.nc.Read(buf); err != nil {
			break // closed
		}
	}
}

// TestPushesReachABlockedClient (S32, S34): a RESP3 client blocked in
// BLPOP receives the messages published meanwhile and its tracking
// invalidations at once, as redis-server 7.0 writes them, not when the
// BLPOP ends.
func TestPushesReachABlockedClient(t *testing.T) {
	p := newPeers(t, 2, 3, nil)
	p.same(0, "SUBSCRIBE", "ch")
	p.same(0, "CLIENT", "TRACKING", "ON")
	p.same(0, "GET", "k")
	p.ours[0].send("BLPOP", "l", "0")
	p.peer[0].send("BLPOP", "l", "0")
	time.Sleep(100 * time.Millisecond) // blocked on both
	p.same(1, "PUBLISH", "ch", "hi")
	p.sameRead(0, pushWait, "the message published while blocked")
	p.same(1, "SET", "k", "1")
	p.sameRead(0, pushWait, "the invalidation sent while blocked")
	p.same(1, "RPUSH", "l", "x")
	p.sameRead(0, pushWait, "BLPOP's reply")
	p.same(1, "PUBLISH", "ch", "after")
	p.sameRead(0, pushWait, "the message after BLPOP")
	p.same(0, "PING")
}

// TestBlockedHangupAfterAPush (S32): a client blocked in BLPOP that is
// sent more pushes than its socket takes (so it is woken) and then hangs
// up is seen gone: the element pushed after is kept, not served to the
// closed connection and lost.
func TestBlockedHangupAfterAPush(t *testing.T) {
	_, path := startServer(t, nil)
	b, w := dialPeer(t, path), dialPeer(t, path)
	b.do("HELLO", "3")
	b.do("SUBSCRIBE", "ch")
	b.send("BLPOP", "l", "0")
	time.Sleep(100 * time.Millisecond) // blocked
	msg := strings.Repeat("m", 100<<10)
	for range 30 { // 3 MB, past what the socket takes
		w.do("PUBLISH", "ch", msg)
	}
	time.Sleep(100 * time.Millisecond)
	b.nc.Close()
	time.Sleep(200 * time.Millisecond) // the hangup is seen
	w.do("RPUSH", "l", "x")
	if r := w.do("LLEN", "l"); r != ":1\r\n" {
		t.Fatalf("LLEN after the blocked client hung up: %q, want the element kept", r)
	}
}

// TestBlockedPipelinedHangup (S121): a client that sent a request while
// blocked in BLPOP, BZPOPMIN or BLMOVE and then closed is seen gone while it
// waits, as redis-server sees it: it is no longer a blocked client, and
// the next push is served to the next waiter instead of being popped
// into the closed connection and lost.
func TestBlockedPipelinedHangup(t *testing.T) {
	for _, c := range []struct {
		block, push []string
		served      string
	}{
		{[]string{"BLPOP", "k", "0"}, []string{"RPUSH", "k", "v"}, "*2\r\n$1\r\nk\r\n$1\r\nv\r\n"},
		{[]string{"BZPOPMIN", "z", "0"}, []string{"ZADD", "z", "1", "m"}, "*3\r\n$1\r\nz\r\n$1\r\nm\r\n$1\r\n1\r\n"},
		{[]string{"BLMOVE", "s", "d", "LEFT", "LEFT", "0"}, []string{"RPUSH", "s", "v"}, "$1\r\nv\r\n"},
	} {
		t.Run(c.block[0], func(t *testing.T) {
			_, path := startServer(t, nil)
			gone, next, w := dialPeer(t, path), dialPeer(t, path), dialPeer(t, path)
			blocked := func(n int) {
				t.Helper()
				want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
				deadline := time.Now().Add(10 * time.Second)
				for !strings.Contains(w.do("INFO", "clients"), want) {
					if time.Now().After(deadline) {
						t.Fatalf("not %s after 10 s", strings.TrimSpace(want))
					}
					time.Sleep(time.Millisecond)
				}
			}
			gone.send(c.block...)
			blocked(1)
			gone.send("PING") // sent while blocked: unread in the socket
			time.Sleep(50 * time.Millisecond)
			gone.nc.Close()
			blocked(0)
			next.send(c.block...)
			blocked(1)
			w.do(c.push...)
			if r := next.read(5 * time.Second); r != c.served {
				t.Fatalf("the next waiter got %q, want %q", r, c.served)
			}
		})
	}
}

// TestNoMessageAfterUnsubscribe (S32, S58): once a client has
// UNSUBSCRIBE's (SUNSUBSCRIBE's) answer for a channel (shard channel) it
// gets no message of that channel, as in Redis, while a publisher floods
// it: a message published during the command comes before the answer.
func TestNoMessageAfterUnsubscribe(t *testing.T) {
	t.Run("channel", func(t *testing.T) { noMessageAfterUnsubscribe(t, "SUBSCRIBE", "UNSUBSCRIBE", "PUBLISH", "message") })
	t.Run("shard", func(t *testing.T) { noMessageAfterUnsubscribe(t, "SSUBSCRIBE", "SUNSUBSCRIBE", "SPUBLISH", "smessage") })
}

// noMessageAfterUnsubscribe is TestNoMessageAfterUnsubscribe with the
// given commands and message kind.
func noMessageAfterUnsubscribe(t *testing.T, subscribe, unsubscribe, publish, kind string) {
	_, path := startServer(t, nil)
	sub, pub := dialPeer(t, path), dialPeer(t, path)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		batch := strings.Repeat(fmt.Sprintf("*3\r\n$%d\r\n%s\r\n$1\r\nc\r\n$1\r\nm\r\n", len(publish), publish), 64)
		for {
			select {
			case <-stop:
				return
			default:
			}
			pub.nc.Write([]byte(batch))
			for range 64 {
				pub.read(5 * time.Second)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	unsub := fmt.Sprintf("*3\r\n$%d\r\n%s\r\n$1\r\nc\r\n:0\r\n", len(unsubscribe), strings.ToLower(unsubscribe))
	msg := fmt.Sprintf("*3\r\n$%d\r\n%s\r\n$1\r\nc\r\n$1\r\nm\r\n", len(kind), kind)
	for round := 0; round < 5000; round++ {
		sub.send(subscribe, "c")
		sub.send(unsubscribe, "c")
		sub.send("PING")
		after := false
		for r := sub.read(5 * time.Second); r != "+PONG\r\n"; r = sub.read(5 * time.Second) {
			switch {
			case r == "":
				t.Fatal("no PONG")
			case r == unsub:
				after = true
			case r == msg && after:
				t.Fatalf("round %d: a message of c after %s's answer", round, unsubscribe)
			}
		}
		if !after {
			t.Fatalf("round %d: no answer %q to %s", round, unsub, unsubscribe)
		}
	}
}
