package server

import (
	"bufio"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestThousandSubscribers (S32, pubsub PS3): 1,000 subscribers and a
// publisher pipelining as fast as it can: every subscriber receives every
// message, or was disconnected at its limit and counted, so no loss goes
// uncounted; the server's heap stays bounded by the subscribers' limits,
// not by what was published.
func TestThousandSubscribers(t *testing.T) {
	s, path := startServer(t, nil)
	subs, msgs := 1000, 3000
	if testing.Short() { // under the race detector: the same paths, scaled down
		subs, msgs = 100, 300
	}
	const limit = 32 << 10
	dialPeer(t, path).do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 32kb 16kb 1")
	var received atomic.Int64
	var wg sync.WaitGroup
	ready := make(chan struct{}, subs)
	for i := 0; i < subs; i++ {
		nc, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReader(nc)
			nc.Write([]byte("*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nload\r\n"))
			var b []byte
			for n := -1; n < msgs; n++ { // the subscribe reply, then the messages
				nc.SetReadDeadline(time.Now().Add(30 * time.Second))
				if err := readRaw(br, &b); err != nil {
					return // closed at its limit: counted by the server
				}
				b = b[:0]
				if n == -1 {
					ready <- struct{}{}
				} else {
					received.Add(1)
				}
			}
		}()
	}
	for i := 0; i < subs; i++ {
		<-ready
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	pub := dialPeer(t, path)
	payload := string(make([]byte, 64))
	var peak uint64
	for i := 0; i < msgs; i += 100 {
		for j := 0; j < 100; j++ {
			pub.send("PUBLISH", "load", payload)
		}
		for j := 0; j < 100; j++ {
			pub.read(60 * time.Second)
		}
		if i%1000 == 0 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
	}
	wg.Wait()
	st := s.Stats()
	lost := int64(subs*msgs) - received.Load()
	if closed := int64(st.PubSubLimitCloses); lost > 0 && closed == 0 {
		t.Fatalf("%d messages not received and no subscriber was closed at its limit: an uncounted loss", lost)
	}
	if st.PubSubDropped > 0 && st.PubSubLimitCloses == 0 {
		t.Fatalf("%d messages dropped without a disconnection", st.PubSubDropped)
	}
	// Bounded: what is published (3000 × ~90 B × 1000 subscribers = 270
	// MB) never all sits in memory: each subscriber holds at most its
	// limit queued and as much unsent in its socket's spill.
	if grow, bound := int64(peak)-int64(before.HeapInuse), int64(32<<20+subs*2*limit); !raceEnabled && grow > bound {
		t.Fatalf("live heap grew %d MiB while publishing, bound %d MiB", grow>>20, bound>>20)
	}
	t.Logf("%d of %d messages received, %d subscribers closed at the limit, heap +%d MiB at most",
		received.Load(), subs*msgs, st.PubSubLimitCloses, (int64(peak)-int64(before.HeapInuse))>>20)
}
