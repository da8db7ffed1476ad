package remote

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/remote/redistest"
)

// atMaxmemory puts srv over its maxmemory for good: filler keys, then a
// maxmemory below what it uses (CONFIG SET keeps the keys under
// noeviction), so every write that may grow memory answers -OOM however
// much client buffers come and go.
func atMaxmemory(t *testing.T, srv *redistest.Server) {
	t.Helper()
	v := strings.Repeat("x", 64<<10)
	for i := 0; i < 32; i++ {
		if _, err := srv.Do("SET", fmt.Sprintf("filler:%d", i), v); err != nil {
			t.Fatal(err)
		}
	}
	info, err := srv.Do("INFO", "memory")
	if err != nil {
		t.Fatal(err)
	}
	var used int
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
			used, _ = strconv.Atoi(v)
		}
	}
	if used < 2<<20 {
		t.Fatalf("used_memory %d after 2 MiB of fillers", used)
	}
	if _, err := srv.Do("CONFIG", "SET", "maxmemory", strconv.Itoa(used-(1<<20))); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Do("SET", "probe", "x"); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("a SET over maxmemory: %v", err)
	}
}

// putErr is one put's outcome.
func putErr(s *Store, key string, value []byte) error {
	it := &flusher.Item{Key: []byte(key), Value: value}
	if err := s.PutMany(context.Background(), []*flusher.Item{it}); err != nil {
		return err
	}
	return it.Err
}

// TestOOMKeepsReadsOpen checks R7 and R8 against a redis-server at its
// maxmemory with noeviction: puts are refused (-OOM) and counted, the
// breaker stays closed however many are refused, reads and deletes keep
// working, a refused put or new expiry leaves no older value of its key
// behind (small and chunked), a store opened meanwhile connects, and once memory is
// freed puts land again.
func TestOOMKeepsReadsOpen(t *testing.T) {
	srv := redistest.StartServer(t, "--maxmemory-policy", "noeviction")
	s, _ := openStore(t, []string{srv.Addr}, "oom:", func(c *Config) { c.BreakerFailures = 2; c.ChunkBytes = 4096 })
	put(t, s, "kept", []byte("v"), 0, 0)
	put(t, s, "replaced", []byte("old"), 0, 0)
	put(t, s, "big", bytes.Repeat([]byte("o"), 10000), 0, 0)
	put(t, s, "timed", []byte("v"), 0, 0)
	atMaxmemory(t, srv)
	for i := 0; i < 10; i++ {
		if err := putErr(s, "replaced", bytes.Repeat([]byte("n"), 100<<10)); err == nil || !strings.Contains(err.Error(), "OOM") {
			t.Fatalf("put %d at maxmemory: %v, want OOM", i, err)
		}
	}
	if err := putErr(s, "big", bytes.Repeat([]byte("n"), 100<<10)); err == nil {
		t.Fatal("a chunked put at maxmemory was taken")
	}
	exp := time.Now().Add(time.Hour).UnixNano()
	if errs := s.RetimeMany(context.Background(), [][]byte{[]byte("timed")}, []int64{exp}); errs[0] == nil {
		t.Fatal("a new expiry at maxmemory was taken")
	}
	st := s.Stats().Remote
	if st.Breaker != "closed" || st.OOM < 12 || st.Refused < st.OOM || st.Errors != 0 {
		t.Fatalf("after refused puts: breaker %s, oom %d, refused %d, errors %d", st.Breaker, st.OOM, st.Refused, st.Errors)
	}
	if v, _, ok := get(t, s, "kept"); !ok || string(v) != "v" {
		t.Fatalf("a read at maxmemory: %q %v", v, ok)
	}
	for _, k := range []string{"replaced", "big", "timed"} {
		if v, _, ok := get(t, s, k); ok {
			t.Fatalf("%s: a refused put left the value it replaced (%d bytes)", k, len(v))
		}
	}
	if err := s.Delete(context.Background(), []byte("kept")); err != nil {
		t.Fatalf("a delete at maxmemory: %v", err)
	}
	late, _ := openStore(t, []string{srv.Addr}, "oom:", nil)
	redistest.Eventually(t, 5*time.Second, "a store opened at maxmemory connects", late.Available)
	if st.Generation != late.Stats().Remote.Generation {
		t.Fatalf("generations %d and %d", st.Generation, late.Stats().Remote.Generation)
	}
	if _, err := srv.Do("CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "replaced", []byte("new"), 0, 0)
	if v, _, ok := get(t, late, "replaced"); !ok || string(v) != "new" {
		t.Fatalf("after memory was freed: %q %v", v, ok)
	}
}

// TestReadOnlyAfterFailover checks R7 and R10 for a failover behind one
// address (a DNS name, a provider's primary endpoint: here a proxy): the
// old master is demoted under the store's connection, so writes answer
// READONLY; reads go on, the breaker stays closed, the refusals are
// counted, and the store connects to the address again, which reaches the
// new master, so writes land there.
func TestReadOnlyAfterFailover(t *testing.T) {
	m1 := redistest.StartServer(t, "--repl-diskless-sync-delay", "0")
	m2 := redistest.StartServer(t, "--repl-diskless-sync-delay", "0")
	replicaOf := func(r, m *redistest.Server) {
		t.Helper()
		if _, err := r.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port)); err != nil {
			t.Fatal(err)
		}
		redistest.Eventually(t, 10*time.Second, r.Addr+" syncs with its master", func() bool {
			info, err := r.Do("INFO", "replication")
			return err == nil && strings.Contains(info, "master_link_status:up")
		})
	}
	replicaOf(m2, m1)
	p := redistest.StartProxy(t, m1.Addr)
	s, _ := openStore(t, []string{p.Addr}, "ro:", func(c *Config) { c.BreakerFailures, c.BreakerBackoff = 2, 50*time.Millisecond })
	put(t, s, "k", []byte("v1"), 0, 0)
	redistest.Eventually(t, 5*time.Second, "the replica has the write", func() bool {
		v, err := m2.Do("EXISTS", fmt.Sprintf("ro:d%d:k", s.Stats().Remote.Generation))
		return err == nil && v == "1"
	})
	// The failover: m2 promoted, m1 demoted, the address moved.
	if _, err := m2.Do("REPLICAOF", "NO", "ONE"); err != nil {
		t.Fatal(err)
	}
	replicaOf(m1, m2)
	p.Retarget(m2.Addr)
	refused := 0
	redistest.Eventually(t, 10*time.Second, "a put lands on the new master", func() bool {
		err := putErr(s, "k", []byte("v2"))
		if err == nil {
			return true
		}
		if !strings.Contains(err.Error(), "READONLY") {
			t.Fatalf("a put after the failover: %v", err)
		}
		if refused++; refused == 1 {
			if v, _, ok := get(t, s, "k"); !ok || string(v) != "v1" {
				t.Fatalf("a read while writes answer READONLY: %q %v", v, ok)
			}
			if st := s.Stats().Remote; st.Breaker != "closed" || st.ReadOnly == 0 {
				t.Fatalf("after READONLY: breaker %s, readonly %d", st.Breaker, st.ReadOnly)
			}
		}
		return false
	})
	if refused == 0 {
		t.Fatal("no put answered READONLY: the failover did not happen under the store")
	}
	direct, _ := openStore(t, []string{m2.Addr}, "ro:", nil)
	if v, _, ok := get(t, direct, "k"); !ok || string(v) != "v2" {
		t.Fatalf("the new master holds %q %v", v, ok)
	}
	if st := s.Stats().Remote; st.Redials == 0 || st.Breaker != "closed" {
		t.Fatalf("after the redial: %d redials, breaker %s", st.Redials, st.Breaker)
	}
}

// TestClearAtMaxmemory checks R11: at maxmemory under noeviction a Clear
// (FLUSHALL) is refused (its INCR may grow memory), and unlinks the
// current generation's keys, so that a retry finds room and succeeds, and
// no key stored before it is found again.
func TestClearAtMaxmemory(t *testing.T) {
	srv := redistest.StartServer(t, "--maxmemory-policy", "noeviction")
	s, _ := openStore(t, []string{srv.Addr}, "clr:", nil)
	for i := 0; i < 4; i++ {
		put(t, s, fmt.Sprint("v", i), bytes.Repeat([]byte("v"), 900<<10), 0, 0)
	}
	atMaxmemory(t, srv)
	if err := s.Clear(context.Background()); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("a Clear at maxmemory: %v, want OOM", err)
	}
	redistest.Eventually(t, 10*time.Second, "a retried Clear succeeds", func() bool { return s.Clear(context.Background()) == nil })
	for i := 0; i < 4; i++ {
		if _, _, ok := get(t, s, fmt.Sprint("v", i)); ok {
			t.Fatalf("v%d is found after the Clear", i)
		}
	}
	if st := s.Stats().Remote; st.Breaker != "closed" || st.Errors != 0 {
		t.Fatalf("breaker %s, errors %d", st.Breaker, st.Errors)
	}
}
