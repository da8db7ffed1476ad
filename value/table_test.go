package value

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestTableModel is V2: a Table behaves as a map under puts of values of
// the same and other lengths, deletes and compactions; Each visits the
// keys in the order they were last written (a same-length put keeps its
// place), AppendBody is those entries with their lengths, and BodySize
// its size.
func TestTableModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var tb Table
	model := map[string]string{}
	var order []string // keys in the order they were last moved
	move := func(k string) {
		for i, o := range order {
			if o == k {
				order = append(order[:i], order[i+1:]...)
				break
			}
		}
		order = append(order, k)
	}
	val := func() string {
		n := r.IntN(20)
		if r.IntN(100) == 0 {
			n = ChunkBytes + r.IntN(ChunkBytes)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(r.IntN(26))
		}
		return string(b)
	}
	for step := range 60000 {
		k := fmt.Sprint("key", r.IntN(3000))
		switch op := r.IntN(10); {
		case op < 5:
			v := val()
			old, had := model[k]
			if added := tb.Put([]byte(k), []byte(v)); added == had {
				t.Fatalf("step %d: Put(%s) added %v, model had %v", step, k, added, had)
			}
			if !had || len(old) != len(v) {
				if had {
					move(k)
				} else {
					order = append(order, k)
				}
			}
			model[k] = v
		case op < 8:
			_, had := model[k]
			if got := tb.Delete([]byte(k)); got != had {
				t.Fatalf("step %d: Delete(%s) %v, model %v", step, k, got, had)
			}
			if had {
				delete(model, k)
				for i, o := range order {
					if o == k {
						order = append(order[:i], order[i+1:]...)
						break
					}
				}
			}
		default:
			v, ok := tb.Get([]byte(k))
			m, had := model[k]
			if ok != had || string(v) != m || tb.Has([]byte(k)) != had {
				t.Fatalf("step %d: Get(%s) %v, model %v", step, k, ok, had)
			}
		}
		if tb.Len() != len(model) {
			t.Fatalf("step %d: Len %d, model %d", step, tb.Len(), len(model))
		}
		if step%5000 == 0 || step == 59999 {
			var body []byte
			i := 0
			tb.Each(func(k, v []byte) bool {
				if i >= len(order) || string(k) != order[i] || string(v) != model[order[i]] {
					t.Fatalf("step %d: Each's %d-th key %s, model %v", step, i, k, i < len(order))
				}
				i++
				body = binary.AppendUvarint(body, uint64(len(k)))
				body = append(body, k...)
				body = binary.AppendUvarint(body, uint64(len(v)))
				body = append(body, v...)
				return true
			})
			if got := tb.AppendBody(nil); !bytes.Equal(got, body) || len(got) != tb.BodySize() {
				t.Fatalf("step %d: AppendBody %d bytes (BodySize %d), want %d", step, len(got), tb.BodySize(), len(body))
			}
		}
	}
	seen := map[string]int{}
	for range 20 * tb.Len() {
		k, _ := tb.Random()
		seen[string(k)]++
	}
	if len(seen) != tb.Len() {
		t.Fatalf("Random drew %d of %d keys", len(seen), tb.Len())
	}
}

// TestTableHeapBytes is V3: HeapBytes is what the heap grows by, within
// 2%, for a table of 100,000 small entries.
func TestTableHeapBytes(t *testing.T) {
	const tables = 4
	ts := make([]*Table, tables)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range ts {
		ts[i] = &Table{}
		for j := range 100000 {
			ts[i].Put([]byte(fmt.Sprintf("field:%06d", j)), []byte("v12"))
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / tables
	got := float64(ts[0].HeapBytes())
	if got < grew*0.98 || got > grew*1.02 {
		t.Fatalf("HeapBytes %.0f, the heap grew %.0f a table", got, grew)
	}
	t.Logf("%.1f heap bytes a field", got/100000)
	runtime.KeepAlive(ts)
}
