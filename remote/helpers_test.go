package remote

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/remote/redistest"
)

// sharedCluster is one 3+3 cluster for the tests that only read and write
// (each under a prefix of its own); the failure tests start their own.
var (
	clusterOnce sync.Once
	cluster     *redistest.Cluster
)

// testCluster starts the shared cluster on first use; it lives until the
// test binary exits (its processes are killed by the first test's
// cleanup otherwise, so it is started under a long-lived testing.TB).
func testCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	return redistest.StartCluster(t, 3, 1)
}

// openStore opens a store on addrs with prefix, Watch recording what it
// is told; Close runs at cleanup.
func openStore(t *testing.T, addrs []string, prefix string, edit func(*Config)) (*Store, *watched) {
	t.Helper()
	cfg := Config{Addrs: addrs, Prefix: prefix, Timeout: 200 * time.Millisecond, Health: 50 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	s, err := Open(cfg, backend.Params{MaxValue: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w := &watched{}
	s.Watch(w.add)
	return s, w
}

// watched records what Watch was told.
type watched struct {
	mu      sync.Mutex
	keys    map[string]int
	alls    int // Lost or Cleared
	cleared int
}

func (w *watched) add(ch backend.Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch.Lost || ch.Cleared {
		w.alls++
		if ch.Cleared {
			w.cleared++
		}
		return
	}
	if w.keys == nil {
		w.keys = map[string]int{}
	}
	for _, k := range ch.Keys {
		w.keys[string(k)]++
	}
}

func (w *watched) count(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.keys[key]
}

func (w *watched) all() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.alls
}

func put(t *testing.T, s *Store, key string, value []byte, exp int64, flags uint32) {
	t.Helper()
	it := &flusher.Item{Key: []byte(key), Value: value, Expiry: exp, Flags: flags}
	if err := s.PutMany(context.Background(), []*flusher.Item{it}); err != nil || it.Err != nil {
		t.Fatalf("put %s: %v %v", key, err, it.Err)
	}
}

func get(t *testing.T, s *Store, key string) ([]byte, backend.Meta, bool) {
	t.Helper()
	v, m, ok, err := s.Get(context.Background(), nil, []byte(key), -1)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return v, m, ok
}

func mustEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
}

// clears is how many times Watch was told Cleared.
func (w *watched) clears() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cleared
}
