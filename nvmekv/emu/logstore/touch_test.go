package logstore

import (
	"math/rand/v2"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
)

// TestTouchChangesNothing: TouchLocked over a batch of every kind of
// command, keys present, absent, empty and too long, leaves every lookup
// and the log's accounting as they were.
func TestTouchChangesNothing(t *testing.T) {
	l := mustOpenLog(t, testOptions(t))
	defer l.close(t)
	for i := range 200 {
		l.store(t, churnKey(i), testValue(i, 0, 100))
	}
	var ops []*nvmekv.Op
	for i := range 400 {
		code := []nvmekv.Opcode{nvmekv.OpStore, nvmekv.OpRetrieve, nvmekv.OpDelete, nvmekv.OpExist, nvmekv.OpList, nvmekv.OpFlush}[i%6]
		ops = append(ops, &nvmekv.Op{Code: code, Key: []byte(churnKey(i))})
	}
	ops = append(ops, &nvmekv.Op{Code: nvmekv.OpStore}, &nvmekv.Op{Code: nvmekv.OpStore, Key: make([]byte, 17)})
	l.RLock()
	l.TouchLocked(ops)
	l.RUnlock()
	for i := range 400 {
		if _, ok := l.lookup(churnKey(i)); ok != (i < 200) {
			t.Fatalf("key %d: found %v after TouchLocked", i, ok)
		}
	}
	if err := l.CheckAccounting(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkTagIndexBatch measures a flusher batch's lookups in an index
// of TIERCACHE_BENCH_ITEMS random tags (default 10M; 1M under -short): 64
// new keys a batch, each looked up with every candidate walked (a new
// key's Store, SlotLocked), with and without touching their home slots
// first (TouchLocked's loads). ns/op is a key's, the touch included.
func BenchmarkTagIndexBatch(b *testing.B) {
	x, _ := benchTagIndex(0)
	for _, touch := range []bool{false, true} {
		name := "plain"
		if touch {
			name = "touched"
		}
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(35, 4))
			var batch [64]uint32
			var sum uint64
			i := 0
			for b.Loop() {
				if i%len(batch) == 0 {
					for j := range batch {
						batch[j] = r.Uint32()
					}
					if touch {
						for _, tag := range batch {
							sum += x.touchHome(tag)
						}
					}
				}
				c := x.cands(batch[i%len(batch)])
				for s, _ := c.next(); s != nil; s, _ = c.next() {
				}
				i++
			}
			b.ReportMetric(float64(sum%2), "sink")
		})
	}
}
