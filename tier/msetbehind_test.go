package tier

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestMSetBehindStoresAllOrNone checks T60: in Backpressure mode an MSET
// whose pairs wait for DRAM room held by records on their way to a
// stalled device either stores every pair or, refused with ErrColdBehind,
// none; and it waits about Flusher.Wait in all, not once per pair. Its
// first pair is a value no DRAM log takes (stored straight to cold, no
// room needed), the others small new keys: before the fix the first was
// stored, the second refused, and MSET answered "nothing was stored".
func TestMSetBehindStoresAllOrNone(t *testing.T) {
	const wait = 100 * time.Millisecond
	var open func()
	c := openCold(t, func(o *Options) {
		// QueueBytes is large (smallOptions): admitWrite lets every write in.
		o.Flusher.Wait = wait
		open = stallCold(t, o) // flush_test.go
	})
	const size = 1000
	val := func(i, round int) []byte { return []byte(fmt.Sprintf("%-*d", size, i*10+round)) }
	key := func(i int) []byte { return []byte(fmt.Sprint("k", i)) }
	acked := 0
	for ; ; acked++ {
		_, err := c.Set(key(acked), val(acked, 0), SetOptions{})
		if errors.Is(err, ErrColdBehind) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if acked > 100000 {
			t.Fatal("no write was refused although the device took nothing")
		}
	}
	// A value larger than a warm segment needs no DRAM room (it goes
	// straight to cold, readable in transit); many small new pairs follow,
	// each of which would wait Wait on its own.
	big := make([]byte, 100<<10)
	big[0] = 'b'
	kvs := [][2][]byte{{[]byte("big"), big}}
	for i := range 10 {
		kvs = append(kvs, [2][]byte{[]byte(fmt.Sprint("new", i)), val(i, 1)})
	}
	start := time.Now()
	err := c.MSet(kvs)
	took := time.Since(start)
	stored := 0
	for _, kv := range kvs {
		if v, ok, _ := c.Get(nil, kv[0]); ok && string(v) == string(kv[1]) {
			stored++
		}
	}
	t.Logf("MSET of %d pairs: %v after %v; %d pairs stored", len(kvs), err, took, stored)
	switch {
	case err == nil && stored != len(kvs):
		t.Errorf("MSET acknowledged, but only %d of %d pairs read back", stored, len(kvs))
	case err != nil && !errors.Is(err, ErrColdBehind):
		t.Fatal(err)
	case err != nil && stored != 0:
		t.Errorf("MSET answered %q, yet %d of its %d pairs were stored", err, stored, len(kvs))
	}
	if took > 5*wait { // generous: one Wait, cleaning, a busy machine
		t.Errorf("MSET waited %v with Flusher.Wait %v", took, wait)
	}
	open()
	settle(t, c)
	for i := range acked {
		if v, ok, err := c.Get(nil, key(i)); err != nil || !ok || string(v) != string(val(i, 0)) {
			t.Fatalf("k%d after the device came back: %.20q %v %v", i, v, ok, err)
		}
	}
	for _, kv := range kvs {
		if v, ok, _ := c.Get(nil, kv[0]); (err == nil) != (ok && string(v) == string(kv[1])) {
			t.Fatalf("%s after the device came back: %.20q %v (MSET answered %v)", kv[0], v, ok, err)
		}
	}
	if st := c.Stats(); st.Flusher.Drops != 0 || st.Lost != 0 {
		t.Fatalf("flusher drops %d, lost %d: want none", st.Flusher.Drops, st.Lost)
	}
}
