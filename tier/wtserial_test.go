package tier

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriteThroughChangesOfOneKeyAreSerialized checks T30: in writethrough
// mode a change of a key decides against the state the previous change
// published, never against one about to be replaced. Four goroutines
// increment one counter with Update while others rewrite its expiry
// (ExpireIf, Persist) and SET it with NX (which must keep failing): no
// increment is lost. Before T30 the expiry changes, pending in cold,
// made increments decide against the older value and drop (the count
// ended at 1 of 400).
func TestWriteThroughChangesOfOneKeyAreSerialized(t *testing.T) {
	needURing(t)
	var fail atomic.Bool
	c := openFaulty(t, t.TempDir(), &fail)
	k := []byte("n")
	if _, err := c.Set(k, []byte("0"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 100
	var wg, bg sync.WaitGroup
	stop := make(chan struct{})
	errc := make(chan error, workers+2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := c.Update(k, func(cur Current) (Change, error) {
					n, _ := strconv.Atoi(string(cur.Value))
					return Change{Op: Store, Value: []byte(strconv.Itoa(n + 1))}, nil
				})
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	bg.Add(1)
	go func() {
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			switch i % 3 {
			case 0:
				_, err = c.ExpireIf(k, time.Hour, 0)
			case 1:
				_, err = c.Persist(k)
			default:
				var stored bool
				if stored, err = c.Set(k, []byte("clobbered"), SetOptions{NX: true}); err == nil && stored {
					t.Error("SET NX stored over a live key")
				}
			}
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	bg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	v, ok, err := c.Get(nil, k)
	if err != nil || !ok || string(v) != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %q (found %v, %v), want %d: increments were lost", v, ok, err, workers*each)
	}
}

// TestWriteThroughPersistErrorIsReported: a PERSIST that cannot be made
// durable answers its error (not "no expiry") and the key keeps its TTL.
func TestWriteThroughPersistErrorIsReported(t *testing.T) {
	needURing(t)
	var fail atomic.Bool
	c := openFaulty(t, t.TempDir(), &fail)
	k := []byte("timed")
	if _, err := c.Set(k, []byte("v"), SetOptions{TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if ok, err := c.Persist(k); err == nil {
		t.Fatalf("Persist on a failing store = %v, nil; want the error", ok)
	}
	fail.Store(false)
	if ttl, ok := c.TTL(k); !ok || ttl <= 0 {
		t.Fatalf("TTL after the failed Persist = %v, %v; want the hour it had", ttl, ok)
	}
}
