package tier

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGetDelGetEx (T16): GetDel returns the value and deletes the key, in
// hot and in cold (a key the directory forgot, T15), also across a
// restart; GetEx returns the value and sets, moves or removes the expiry,
// and an absolute expiry in the past deletes the key; SetGet returns the
// cold value it replaced.
func TestGetDelGetEx(t *testing.T) {
	c, o := openTrimming(t, 200)
	defer func() { c.Close() }()
	get := func(key []byte) ([]byte, bool) {
		t.Helper()
		v, ok, err := c.Get(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		return v, ok
	}
	must := func(v []byte, ok bool, err error) []byte {
		t.Helper()
		if err != nil || !ok {
			t.Fatalf("ok %v, err %v; want a hit", ok, err)
		}
		return v
	}

	// A key in memory.
	if _, err := c.Set([]byte("h"), []byte("vh"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := must(c.GetDel(nil, []byte("h"))); string(v) != "vh" {
		t.Fatalf("GetDel: %q", v)
	}
	if _, ok := get([]byte("h")); ok {
		t.Fatal("the key is still there after GetDel")
	}
	if v, ok, err := c.GetDel([]byte("dst:"), []byte("h")); ok || err != nil || string(v) != "dst:" {
		t.Fatalf("GetDel of an absent key: %q %v %v", v, ok, err)
	}
	if _, err := c.Set([]byte("x"), []byte("vx"), SetOptions{TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if v := must(c.GetEx([]byte("dst:"), []byte("x"), Expiry{Persist: true})); string(v) != "dst:vx" {
		t.Fatalf("GetEx appends to dst: %q", v)
	}
	if ttl, ok := c.TTL([]byte("x")); !ok || ttl >= 0 {
		t.Fatalf("after GetEx PERSIST: TTL %v %v, want none", ttl, ok)
	}
	must(c.GetEx(nil, []byte("x"), Expiry{TTL: 2 * time.Hour}))
	if ttl, ok := c.TTL([]byte("x")); !ok || ttl <= time.Hour || ttl > 2*time.Hour {
		t.Fatalf("after GetEx EX 2h: TTL %v %v", ttl, ok)
	}
	must(c.GetEx(nil, []byte("x"), Expiry{At: time.Now().Add(3 * time.Hour)}))
	if ttl, ok := c.TTL([]byte("x")); !ok || ttl <= 2*time.Hour {
		t.Fatalf("after GetEx EXAT +3h: TTL %v %v", ttl, ok)
	}
	must(c.GetEx(nil, []byte("x"), Expiry{}))
	if ttl, _ := c.TTL([]byte("x")); ttl <= 2*time.Hour {
		t.Fatalf("GetEx without a change changed the TTL: %v", ttl)
	}
	if v := must(c.GetEx(nil, []byte("x"), Expiry{At: time.Unix(1, 0)})); string(v) != "vx" {
		t.Fatalf("GetEx EXAT in the past: %q, want the value", v)
	}
	if _, ok := get([]byte("x")); ok {
		t.Fatal("GetEx with an expiry in the past left the key")
	}
	if _, _, err := c.GetDel(nil, nil); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("GetDel of an empty key: %v", err)
	}

	// Keys only cold holds: the directory forgot them.
	const n = 1000
	fillTrimmed(t, c, n, 0, o.MaxKeys)
	var forgotten []int
	for i := 0; i < n && len(forgotten) < 3; i++ {
		if !inDirectory(c, trimKey(i)) {
			forgotten = append(forgotten, i)
		}
	}
	if len(forgotten) < 3 {
		t.Fatalf("only %d keys forgotten", len(forgotten))
	}
	del, ex, swap := forgotten[0], forgotten[1], forgotten[2]
	if old, had, stored, err := c.SetGet(nil, trimKey(swap), []byte("new"), SetOptions{}); !had || !stored || err != nil ||
		!bytes.Equal(old, trimValue(swap, 0)) {
		t.Fatalf("SetGet of a cold key: had %v stored %v err %v old %.20q", had, stored, err, old)
	}
	if v, ok := get(trimKey(swap)); !ok || string(v) != "new" {
		t.Fatalf("after SetGet: %v %q", ok, v)
	}
	if old, had, stored, err := c.SetGet(nil, []byte("fresh"), []byte("v"), SetOptions{XX: true}); had || stored || err != nil || len(old) != 0 {
		t.Fatalf("SetGet XX of an absent key: had %v stored %v err %v old %q", had, stored, err, old)
	}
	if v := must(c.GetDel(nil, trimKey(del))); !bytes.Equal(v, trimValue(del, 0)) {
		t.Fatalf("GetDel of a cold key: %.20q", v)
	}
	if _, ok := get(trimKey(del)); ok {
		t.Fatal("a cold key is still there after GetDel")
	}
	if v := must(c.GetEx(nil, trimKey(ex), Expiry{TTL: time.Hour})); !bytes.Equal(v, trimValue(ex, 0)) {
		t.Fatalf("GetEx of a cold key: %.20q", v)
	}
	if ttl, ok := c.TTL(trimKey(ex)); !ok || ttl <= 0 || ttl > time.Hour {
		t.Fatalf("after GetEx EX 1h of a cold key: TTL %v %v", ttl, ok)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if c, err = Open(o); err != nil {
		t.Fatal(err)
	}
	if _, ok := get(trimKey(del)); ok {
		t.Fatal("a key GetDel deleted came back after a restart")
	}
	if _, ok := get([]byte("h")); ok {
		t.Fatal("a key GetDel deleted came back after a restart")
	}
	if v, ok := get(trimKey(ex)); !ok || !bytes.Equal(v, trimValue(ex, 0)) {
		t.Fatalf("the key GetEx read, after the restart: %v %.20q", ok, v)
	}
	if v, ok := get(trimKey(swap)); !ok || string(v) != "new" {
		t.Fatalf("the key SetGet wrote, after the restart: %v %q", ok, v)
	}
	c.Close()
	if _, _, err := c.GetDel(nil, []byte("h")); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetDel after Close: %v", err)
	}
}

// TestConcurrentGetDel (T16): consumers GetDel the keys that writers keep
// setting to fresh values. Each value written is returned by at most one
// GetDel, and a value returned is never still readable afterwards: a Get
// followed by a Delete would hand one value to two consumers.
func TestConcurrentGetDel(t *testing.T) {
	needURing(t)
	o := restartOptions(t.TempDir(), DurabilityCache)
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const keys, writers, consumers, perWriter = 4, 2, 4, 8000
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				k := []byte(fmt.Sprintf("k%d", i%keys))
				if _, err := c.Set(k, []byte(fmt.Sprintf("w%d-%d", w, i)), SetOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	taken := map[string]int{}
	var cw sync.WaitGroup
	for r := 0; r < consumers; r++ {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				v, ok, err := c.GetDel(nil, []byte(fmt.Sprintf("k%d", i%keys)))
				if errors.Is(err, ErrKeyBusy) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					taken[string(v)]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	cw.Wait()
	dups := 0
	for v, n := range taken {
		if n > 1 {
			dups++
			if dups <= 5 {
				t.Errorf("value %s was returned by %d GetDels", v, n)
			}
		}
	}
	for k := 0; k < keys; k++ {
		if v, ok, _ := c.Get(nil, []byte(fmt.Sprintf("k%d", k))); ok && taken[string(v)] > 0 {
			t.Errorf("k%d still holds %s, which a GetDel returned", k, v)
		}
	}
	t.Logf("%d values consumed of %d written; %d returned twice or more", len(taken), writers*perWriter, dups)
	if len(taken) == 0 {
		t.Fatal("no GetDel found a value")
	}
}

// TestConcurrentSetGet (T16): writers swap values into one key with
// SetGet. The swaps form one history: every value written is handed back
// as the replaced value exactly once, except the last, which the key
// holds, and exactly one SetGet found the key absent. A Get followed by a
// Set would hand one value to two writers and lose another.
func TestConcurrentSetGet(t *testing.T) {
	o := smallOptions(newFakeClock())
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const writers, each = 4, 3000
	key := []byte("swap")
	var mu sync.Mutex
	olds := map[string]int{}
	absent := 0
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				v := fmt.Sprintf("w%d-%d", w, i)
				old, had, stored, err := c.SetGet(nil, key, []byte(v), SetOptions{})
				for errors.Is(err, ErrKeyBusy) {
					old, had, stored, err = c.SetGet(nil, key, []byte(v), SetOptions{})
				}
				if err != nil || !stored {
					t.Errorf("SetGet %s: stored %v, %v", v, stored, err)
					return
				}
				mu.Lock()
				if had {
					olds[string(old)]++
				} else {
					absent++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	last, ok, err := c.Get(nil, key)
	if err != nil || !ok {
		t.Fatalf("Get after the swaps: %v %v", ok, err)
	}
	if st := c.Stats(); st.Lost != 0 {
		t.Fatalf("the cache dropped %d copies; the test needs none: %+v", st.Lost, st)
	}
	if absent != 1 {
		t.Errorf("%d SetGets found the key absent, want 1", absent)
	}
	bad := 0
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			v := fmt.Sprintf("w%d-%d", w, i)
			want := 1
			if v == string(last) {
				want = 0
			}
			if olds[v] != want && bad < 5 {
				bad++
				t.Errorf("%s was handed back %d times, want %d", v, olds[v], want)
			}
		}
	}
}

// TestSetGetColdReadError: when the value SET ... GET would replace cannot
// be read (a cold device error) while the key keeps its version, SetGet
// stores nothing and says so (ErrUnreadable): answering a miss would tell
// SET NX GET that the key was absent and set.
func TestSetGetColdReadError(t *testing.T) {
	needURing(t)
	var failWrites, failReads atomic.Bool
	o := smallOptions(newFakeClock())
	faultyCold(&o, t.TempDir(), &failWrites, &failReads)
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	idx := coldOnly(t, c, 400, 2, 0)
	// One key per case: the Get that checks a case may promote its key
	// into hot, where the next read would not fail.
	for j, so := range []SetOptions{{}, {NX: true}} {
		i := idx[j]
		key := trimKey(i)
		failReads.Store(true)
		old, had, stored, err := c.SetGet(nil, key, []byte("new"), so)
		failReads.Store(false)
		if !errors.Is(err, ErrUnreadable) || had || stored || len(old) != 0 {
			t.Fatalf("SetGet %+v over an unreadable cold copy: had %v stored %v err %v old %.20q; want ErrUnreadable, nothing stored",
				so, had, stored, err, old)
		}
		if v, ok, err := c.Get(nil, key); !ok || err != nil || !bytes.Equal(v, trimValue(i, 0)) {
			t.Fatalf("after the refused SetGet: %v %v %.20q; want the old value", ok, err, v)
		}
	}
	if st := c.Stats(); st.ColdErrors == 0 {
		t.Errorf("the failed cold reads were not counted: %+v", st)
	}
}
