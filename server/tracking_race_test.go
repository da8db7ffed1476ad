package server

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/coldstore"
	"github.com/tiercache/tiercache/tier"
)

// gatedStore is a cold store whose Get of gate's key waits, once armed,
// until released: a read that is slow exactly where a test wants it.
type gatedStore struct {
	backend.Store
	key     string
	armed   atomic.Bool
	entered chan struct{} // closed as the gated Get begins to wait
	release chan struct{}
}

func (g *gatedStore) Get(ctx context.Context, dst, key []byte, size int) ([]byte, backend.Meta, bool, error) {
	if string(key) == g.key && g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.release
	}
	return g.Store.Get(ctx, dst, key, size)
}

// TestTrackingReadBesideWrite (S34): a key is remembered for a tracking
// client before its read, not after: a write that lands while a GET
// reads the key's old value from cold reaches the reader as an
// invalidation after the old value, so the client never keeps a value
// the server replaced (remembered after the read, the write found no
// tracker and the client kept the old value until the key's next write).
func TestTrackingReadBesideWrite(t *testing.T) {
	g := &gatedStore{key: "k", entered: make(chan struct{}), release: make(chan struct{})}
	tc := openColdCache(t, func(o *tier.Options, cc *coldstore.Config) {
		o.HotMaxValue = coldValueMin - 1
		o.OpenCold = func(p backend.Params) (backend.Store, error) {
			s, err := coldstore.Open(*cc, p)
			g.Store = s
			return g, err
		}
	})
	_, path := startServerWith(t, tc, nil)
	tr, w := dialPeer(t, path), dialPeer(t, path)
	old := strings.Repeat("o", 100)
	w.do("SET", "k", old)
	for deadline := time.Now().Add(10 * time.Second); tc.Where([]byte("k")) != "cold"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("k is in %q, not in cold alone", tc.Where([]byte("k")))
		}
	}
	tr.do("HELLO", "3")
	tr.do("CLIENT", "TRACKING", "ON")
	g.armed.Store(true)
	tr.send("GET", "k")
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the GET never read k from cold")
	}
	if r := w.do("SET", "k", "new"); r != "+OK\r\n" {
		t.Fatalf("SET beside the read: %q", r)
	}
	close(g.release)
	cached := ""
	tr.send("PING")
	for r := tr.read(5 * time.Second); r != "+PONG\r\n"; r = tr.read(5 * time.Second) {
		switch {
		case r == "":
			t.Fatal("no PONG")
		case strings.HasPrefix(r, ">2\r\n$10\r\ninvalidate\r\n"):
			cached = ""
		case strings.HasPrefix(r, "$"):
			cached = r
		}
	}
	if cached != "" && cached != "$3\r\nnew\r\n" {
		t.Fatalf("the tracking client keeps %.20q..., which the SET beside its read replaced, with no invalidation", cached)
	}
}
