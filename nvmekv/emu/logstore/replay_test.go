package logstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestScanReplayOrder checks E36: a log of overwrites and deletes of a
// few hundred keys, many of them in one region, opened by scan with
// batches of 1, 7, 1000 and the default size (0): every key is where the last
// record of it in log order put it (or absent after a delete), and the
// live counts (items, live bytes, each region's live records) are those
// an in-order replay gives, whatever the batch.
func TestScanReplayOrder(t *testing.T) {
	o := testOptions(t)
	l := mustOpenLog(t, o)
	r := rand.New(rand.NewPCG(36, 1))
	want := map[string]Loc{}
	for i := 0; i < 3000; i++ {
		key := fmt.Sprintf("k%03d", r.IntN(300))
		var k [16]byte
		copy(k[:], key)
		if r.IntN(5) == 0 {
			l.Lock()
			loc, ok, err := l.FindLocked(&k, len(key))
			if err == nil && ok {
				if st := l.DeleteLocked(&k, len(key), loc); st != 0 {
					l.Unlock()
					t.Fatalf("delete %s: %#x", key, st)
				}
			}
			l.Unlock()
			delete(want, key)
			continue
		}
		l.store(t, key, testValue(i, 0, 1+r.IntN(300)))
		loc, ok := l.lookup(key)
		if !ok {
			t.Fatalf("%s not found after its store", key)
		}
		want[key] = loc
	}
	before := l.Stats()
	l.close(t)
	o.CheckpointPath = "-" // every open scans
	var first []regionState
	for _, batch := range []int{1, 7, 1000, 0} {
		t.Run(fmt.Sprint("batch=", batch), func(t *testing.T) {
			o.ReplayBatch = batch
			l := mustOpenLog(t, o)
			defer l.close(t)
			st := l.Stats()
			if st.Recovered != "scan" {
				t.Fatalf("recovered by %q, want scan", st.Recovered)
			}
			if st.Items != len(want) || st.LiveBytes != before.LiveBytes {
				t.Errorf("%d items, %d live bytes; before the close %d and %d", st.Items, st.LiveBytes, len(want), before.LiveBytes)
			}
			for key, loc := range want {
				if got, ok := l.lookup(key); !ok || got != loc {
					t.Errorf("%s at %v (found %v), want %v", key, got, ok, loc)
				}
			}
			for i := 0; i < 300; i++ {
				key := fmt.Sprintf("k%03d", i)
				if _, live := want[key]; !live {
					if got, ok := l.lookup(key); ok {
						t.Errorf("%s was deleted last, yet it is at %v", key, got)
					}
				}
			}
			l.Lock()
			regs := append([]regionState(nil), l.regs...)
			l.Unlock()
			if first == nil {
				first = regs
				return
			}
			sameLiveCounts(t, regs, first)
		})
	}
}

// sameLiveCounts fails t for each region whose live records or bytes in
// regs differ from ref's (an in-order replay's).
func sameLiveCounts(t *testing.T, regs, ref []regionState) {
	t.Helper()
	for i := range regs {
		if regs[i].live != ref[i].live || regs[i].liveB != ref[i].liveB {
			t.Errorf("region %d: %d live records of %d bytes; replayed in order: %d of %d", i, regs[i].live, regs[i].liveB, ref[i].live, ref[i].liveB)
		}
	}
}
