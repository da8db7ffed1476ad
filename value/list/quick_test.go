package list

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestQuickModel is VL6: a Quick behaves as a slice of elements under
// every change, from either end and in the middle, with elements of every
// size (a node's worth and more too), and its record is the one Encode
// builds of the same elements.
func TestQuickModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	q := NewQuick()
	var model [][]byte
	elem := func() []byte {
		n := r.IntN(40)
		switch r.IntN(50) {
		case 0:
			n = NodeBytes + r.IntN(3*NodeBytes)
		case 1:
			n = 100 + r.IntN(NodeBytes)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	for step := range 20000 {
		switch op := r.IntN(20); {
		case op < 7:
			vals := make([][]byte, 1+r.IntN(3))
			for i := range vals {
				vals[i] = elem()
			}
			left := r.IntN(2) == 0
			if got, want := q.PushSize(vals), Size(len(model)+len(vals), encodedBody(model)+encodedBody(vals)); got != want {
				t.Fatalf("step %d: PushSize %d, want %d", step, got, want)
			}
			q.Push(vals, left)
			for _, v := range vals {
				if left {
					model = append([][]byte{v}, model...)
				} else {
					model = append(model, v)
				}
			}
		case op < 13:
			k := 1 + r.IntN(4)
			left := r.IntN(2) == 0
			var got [][]byte
			q.Pop(k, left, func(it []byte) { got = append(got, append([]byte(nil), it...)) })
			for i := 0; i < k && len(model) > 0; i++ {
				var want []byte
				if left {
					want, model = model[0], model[1:]
				} else {
					want, model = model[len(model)-1], model[:len(model)-1]
				}
				if i >= len(got) || !bytes.Equal(got[i], want) {
					t.Fatalf("step %d: pop %d of %d (left %v): got %d elements", step, i, k, left, len(got))
				}
			}
		case op < 15:
			if len(model) == 0 {
				continue
			}
			lo := r.IntN(len(model))
			hi := lo + r.IntN(len(model)-lo+1)
			var got [][]byte
			q.Range(lo, hi, func(it []byte) bool { got = append(got, it); return true })
			if len(got) != hi-lo {
				t.Fatalf("step %d: Range(%d, %d) gave %d", step, lo, hi, len(got))
			}
			for i := range got {
				if !bytes.Equal(got[i], model[lo+i]) {
					t.Fatalf("step %d: Range(%d, %d)[%d] differs", step, lo, hi, i)
				}
			}
			if i := r.IntN(len(model)); !bytes.Equal(q.Index(i), model[i]) {
				t.Fatalf("step %d: Index(%d) differs", step, i)
			}
			if !bytes.Equal(q.End(true), model[0]) || !bytes.Equal(q.End(false), model[len(model)-1]) {
				t.Fatalf("step %d: End differs", step)
			}
		case op < 17:
			if len(model) == 0 {
				continue
			}
			lo := r.IntN(len(model))
			hi := lo + r.IntN(len(model)-lo+1)
			q.Trim(lo, hi)
			model = append([][]byte(nil), model[lo:hi]...)
		case op < 18:
			items := q.Items(nil)
			if r.IntN(2) == 0 && len(items) > 0 {
				items[r.IntN(len(items))] = elem()
			}
			q.Replace(items)
			model = items
		default:
			rec := q.AppendRecord([]byte("x"))
			if want := Encode(nil, model); !bytes.Equal(rec[1:], want) || len(rec)-1 != q.RecordSize() {
				t.Fatalf("step %d: record of %d bytes (RecordSize %d), Encode gives %d", step, len(rec)-1, q.RecordSize(), len(want))
			}
			l, err := LoadQuick(rec[1:])
			if err != nil || l.Len() != len(model) || !bytes.Equal(l.AppendRecord(nil), rec[1:]) {
				t.Fatalf("step %d: LoadQuick: %v", step, err)
			}
		}
		if q.Len() != len(model) {
			t.Fatalf("step %d: Len %d, model %d", step, q.Len(), len(model))
		}
	}
}

func encodedBody(items [][]byte) int {
	n := 0
	for _, it := range items {
		n += ItemSize(it)
	}
	return n
}

// TestQuickHeapBytes is VL7: HeapBytes is what the heap grows by for a
// list built by pushes from either end and for one loaded from its
// record, within 2%.
func TestQuickHeapBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func() *Quick
	}{
		{"lpush", func() *Quick {
			q := NewQuick()
			for i := range 100000 {
				q.Push([][]byte{[]byte(fmt.Sprintf("element-%08d", i))}, true)
			}
			return q
		}},
		{"rpush", func() *Quick {
			q := NewQuick()
			for i := range 100000 {
				q.Push([][]byte{[]byte(fmt.Sprintf("element-%08d", i))}, false)
			}
			return q
		}},
		{"load", func() *Quick {
			items := make([][]byte, 100000)
			for i := range items {
				items[i] = []byte(fmt.Sprintf("element-%08d", i))
			}
			q, err := LoadQuick(Encode(nil, items))
			if err != nil {
				t.Fatal(err)
			}
			return q
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Several lists, so that what the collector frees of the
			// test's own heap meanwhile is small beside them.
			const lists = 8
			qs := make([]*Quick, lists)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := range qs {
				qs[i] = tc.make()
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			grew := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / lists
			got := float64(qs[0].HeapBytes())
			if got < grew*0.98 || got > grew*1.02 {
				t.Fatalf("HeapBytes %.0f, the heap grew %.0f a list", got, grew)
			}
			t.Logf("%d elements of 16 bytes: %.1f heap bytes each", qs[0].Len(), got/float64(qs[0].Len()))
			runtime.KeepAlive(qs)
		})
	}
}
