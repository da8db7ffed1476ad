package set

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestLiveModel is VS7: a Live behaves as a set under Add and Remove; its
// record is the one Members builds of the same members (sorted), Size is
// its length, and LoadLive reads it back.
func TestLiveModel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	l := NewLive()
	model := map[string]bool{}
	for step := range 30000 {
		b := []byte(fmt.Sprint("m", r.IntN(2000)))
		switch r.IntN(3) {
		case 0, 1:
			if l.Add(b) == model[string(b)] {
				t.Fatalf("step %d: Add(%s), model %v", step, b, model[string(b)])
			}
			model[string(b)] = true
		default:
			if l.Remove(b) != model[string(b)] {
				t.Fatalf("step %d: Remove(%s), model %v", step, b, model[string(b)])
			}
			delete(model, string(b))
		}
		if l.Len() != len(model) || l.Has(b) != model[string(b)] {
			t.Fatalf("step %d: Len %d Has %v, model %d %v", step, l.Len(), l.Has(b), len(model), model[string(b)])
		}
		if step%1000 == 0 {
			var m Members
			for k := range model {
				m.Add([]byte(k))
			}
			rec := l.AppendRecord(nil)
			if want := m.AppendRecord(nil); !bytes.Equal(rec, want) || len(rec) != l.RecordSize() {
				t.Fatalf("step %d: record of %d bytes (Size %d), Members gives %d", step, len(rec), l.RecordSize(), len(want))
			}
			back, err := LoadLive(rec)
			if err != nil || !bytes.Equal(back.AppendRecord(nil), rec) {
				t.Fatalf("step %d: LoadLive: %v", step, err)
			}
		}
	}
}

// TestLiveHeapBytes is VS8: HeapBytes is what the heap grows by, within
// 2%, for sets of 10,000 members and of 10.
func TestLiveHeapBytes(t *testing.T) {
	for _, n := range []int{10, 10000} {
		sets := 1000000 / n
		ls := make([]*Live, sets) // before the reading: the array is not the sets'
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range ls {
			ls[i] = NewLive()
			for j := range n {
				ls[i].Add([]byte(fmt.Sprintf("m:%d", j)))
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		grew := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(sets)
		got := float64(ls[0].HeapBytes())
		if got < grew*0.98 || got > grew*1.02 {
			t.Fatalf("%d members: HeapBytes %.0f, the heap grew %.0f a set", n, got, grew)
		}
		t.Logf("%d members: %.1f heap bytes a member", n, got/float64(n))
		runtime.KeepAlive(ls)
	}
}
