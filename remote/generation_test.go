package remote

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/remote/redistest"
)

// TestGenerationNeverGoesBack checks R9 against a redis-server that
// evicts (maxmemory-policy allkeys-lru): when the generation key is gone,
// the store's next generation is above every one before, so a key written
// before two FLUSHALLs is not found again after two more (a generation
// remade as 1 comes back to the keys of a generation its sweep never
// reached), and the keys of the lost generation are swept; then a flood
// makes the server evict the key itself, with the same outcome.
func TestGenerationNeverGoesBack(t *testing.T) {
	srv := redistest.StartServer(t, "--maxmemory", "4mb", "--maxmemory-policy", "allkeys-lru")
	a, w := openStore(t, []string{srv.Addr}, "ev:", nil)
	clear := func() {
		t.Helper()
		if err := a.Clear(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	clear()
	clear()
	put(t, a, "k", []byte("before two flushes"), 0, 0)
	g := a.Stats().Remote.Generation
	// DEL is what an eviction does to the key's trackers: an invalidation.
	if _, err := srv.Do("DEL", "ev:g"); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 5*time.Second, "the store takes a new generation", func() bool { return a.Stats().Remote.Generation != g })
	if ng := a.Stats().Remote.Generation; ng < g {
		t.Fatalf("the generation went back from %d to %d", g, ng)
	}
	clear()
	clear()
	if v, _, ok := get(t, a, "k"); ok {
		t.Fatalf("a key written before two FLUSHALLs is found after two more: %q", v)
	}
	redistest.Eventually(t, 5*time.Second, "the lost generation's keys are swept", func() bool {
		n, err := srv.Do("EXISTS", fmt.Sprintf("ev:d%d:k", g))
		return err == nil && n == "0"
	})

	// A real eviction: a flood under another prefix until the server
	// evicts the generation key and the store hears of it.
	g, cleared := a.Stats().Remote.Generation, w.clears()
	flood, _ := openStore(t, []string{srv.Addr}, "flood:", nil)
	v := bytes.Repeat([]byte("f"), 1024)
	for round := 0; w.clears() == cleared; round++ {
		if round == 1000 {
			t.Fatal("1000 rounds of 500 KiB did not evict the generation key of a 4 MB server")
		}
		items := make([]*flusher.Item, 500)
		for i := range items {
			items[i] = &flusher.Item{Key: fmt.Appendf(nil, "%d:%d", round, i), Value: v}
		}
		flood.PutMany(context.Background(), items)
	}
	redistest.Eventually(t, 5*time.Second, "the store takes a new generation", func() bool { return a.Stats().Remote.Generation != g })
	if ng := a.Stats().Remote.Generation; ng < g {
		t.Fatalf("after an eviction the generation went back from %d to %d", g, ng)
	}
}
