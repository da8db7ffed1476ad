package server

import (
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/remote/redistest"
	"github.com/tiercache/tiercache/tier"
)

// startRemoteSidecar serves a cache of small local tiers on the remote tier
// rc (edit tunes its options), closed at the end of the test.
func startRemoteSidecar(t *testing.T, rc remote.Config, edit func(*tier.Options)) (*tier.Cache, string) {
	t.Helper()
	o := tier.Options{HotBytes: testHotBytes, HotMaxValue: 1 << 20}
	o.OpenRemote = func(p backend.Params) (backend.Shared, error) { return remote.Open(rc, p) }
	if edit != nil {
		edit(&o)
	}
	c, err := tier.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_, path := startServerWith(t, c, nil)
	return c, path
}

// waitPush reads from c until a reply containing want arrives, failing
// after timeout.
func waitPush(t *testing.T, c *rawPeer, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if r := c.read(100 * time.Millisecond); strings.Contains(r, want) {
			return
		}
	}
	t.Fatalf("no push with %q within %v", want, timeout)
}

// TestRemovalsNotifyAndInvalidate (S33, S34, tier T46): a key the sweep
// expires publishes "expired" and invalidates its trackers; a key the
// cache loses for want of room (no cold tier) publishes "evicted" and
// invalidates its trackers.
func TestRemovalsNotifyAndInvalidate(t *testing.T) {
	clock := newTestClock()
	_, path := startServerWith(t, newSmallSweptCache(t, clock), nil)
	sub, tracker, w := dialPeer(t, path), dialPeer(t, path), dialPeer(t, path)
	w.do("CONFIG", "SET", "notify-keyspace-events", "Exe")
	sub.do("SUBSCRIBE", "__keyevent@0__:expired", "__keyevent@0__:evicted")
	sub.read(time.Second)
	tracker.do("HELLO", "3")
	tracker.do("CLIENT", "TRACKING", "ON")

	w.do("SET", "ttl", "v", "EX", "10")
	tracker.do("GET", "ttl")
	clock.advance(11 * time.Second)
	waitPush(t, sub, "ttl", 5*time.Second)
	waitPush(t, tracker, "invalidate", 5*time.Second)

	tracker.do("GET", "first")
	w.do("SET", "first", strings.Repeat("x", 1000))
	waitPush(t, tracker, "invalidate", 5*time.Second) // the SET itself
	big := strings.Repeat("y", 32<<10)
	for i := 0; i < 200; i++ { // 6 MiB into 1 MiB: the LFU evicts, no cold tier takes them
		w.do("SET", "fill"+string(rune('a'+i%26))+string(rune('a'+i/26)), big)
	}
	waitPush(t, sub, "evicted", 5*time.Second)
}

// TestTrackingHearsOtherSidecars (S34, tier T39, T46): a change another
// sidecar makes through the shared remote tier reaches this sidecar's
// tracking clients as an invalidation.
func TestTrackingHearsOtherSidecars(t *testing.T) {
	rs := redistest.StartServer(t)
	open := func() string {
		_, path := startRemoteSidecar(t, remote.Config{Addrs: []string{rs.Addr}, Prefix: "trk:", Timeout: 500 * time.Millisecond}, nil)
		return path
	}
	a, b := open(), open()
	ta, wb := dialPeer(t, a), dialPeer(t, b)
	ta.do("HELLO", "3")
	ta.do("CLIENT", "TRACKING", "ON")
	wb.do("SET", "shared", "1")
	deadline := time.Now().Add(5 * time.Second)
	for ta.do("GET", "shared") != "$1\r\n1\r\n" { // read through the remote, and tracked
		if time.Now().After(deadline) {
			t.Fatal("sidecar A never read B's write")
		}
		time.Sleep(20 * time.Millisecond)
	}
	wb.do("SET", "shared", "2")
	waitPush(t, ta, "invalidate", 5*time.Second)
}

// TestMSetNXWaitsForTheRemoteOnce (tier T38): with remote.write through,
// MSETNX waits for the remote at most the wait in all, once, as MSET
// does, not the wait for each key (it holds the transaction lock while it
// runs). The remote here never answers, so every wait is given up.
func TestMSetNXWaitsForTheRemoteOnce(t *testing.T) {
	rc := remote.Config{Addrs: []string{redistest.Silent(t)}, Prefix: "msetnx:", Timeout: 20 * time.Millisecond, DialTimeout: 50 * time.Millisecond}
	c, path := startRemoteSidecar(t, rc, func(o *tier.Options) {
		o.Remote.WriteThrough, o.Remote.Wait = true, 20*time.Millisecond
		o.Remote.Queue.CloseWait = 10 * time.Millisecond // at Close: nothing will be sent
	})
	p := dialPeer(t, path)
	for _, cmd := range [][]string{{"MSETNX", "a", "1", "b", "2", "c", "3", "d", "4"}, {"MSET", "e", "1", "f", "2", "g", "3", "h", "4"}} {
		before := c.Stats().Remote.WaitTimeouts
		if r := p.do(cmd...); r != ":1\r\n" && r != "+OK\r\n" {
			t.Fatalf("%v: %q", cmd, r)
		}
		if n := c.Stats().Remote.WaitTimeouts - before; n != 1 {
			t.Fatalf("%s of 4 keys gave up waiting for the remote %d times; want once", cmd[0], n)
		}
	}
}
