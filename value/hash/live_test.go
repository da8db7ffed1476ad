package hash

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestHashModel is VH9: a Hash behaves as a map under Put and Delete;
// while small its record is byte for byte what the record edits (Put,
// Remove) give, so its order is Redis's listpack order; past SmallFields
// fields or a long value it turns large and keeps every field; its
// record always decodes to its fields, RecordSize is its length,
// SizeAfter predicts a Put, and LoadHash reads it back.
func TestHashModel(t *testing.T) {
	for _, long := range []bool{false, true} {
		r := rand.New(rand.NewPCG(7, 8))
		h := NewHash()
		rec := Encode(nil, nil) // the record edits' model of the small form
		model := map[string]string{}
		for step := range 20000 {
			f := fmt.Sprint("f", r.IntN(400))
			switch op := r.IntN(10); {
			case op < 6:
				v := fmt.Sprint(r.IntN(1000))
				if long && r.IntN(300) == 0 {
					v = string(bytes.Repeat([]byte("x"), SmallValue+1))
				}
				n, size := h.SizeAfter([]byte(f), []byte(v))
				_, had := model[f]
				if added := h.Put([]byte(f), []byte(v)); added == had {
					t.Fatalf("step %d: Put added %v, model had %v", step, added, had)
				}
				model[f] = v
				if h.Len() != n || h.RecordSize() != size {
					t.Fatalf("step %d: SizeAfter said %d fields %d bytes, the hash has %d, %d", step, n, size, h.Len(), h.RecordSize())
				}
				rec, _, _ = Put(nil, rec, []byte(f), []byte(v), Limits{MaxFields: 1 << 30})
			case op < 9:
				_, had := model[f]
				if got := h.Delete([]byte(f)); got != had {
					t.Fatalf("step %d: Delete %v, model %v", step, got, had)
				}
				delete(model, f)
				if out, removed, _ := Remove(nil, rec, []byte(f)); removed {
					rec = out
				}
			default:
				v, ok := h.Get([]byte(f))
				if m, had := model[f]; ok != had || string(v) != m {
					t.Fatalf("step %d: Get %v %q, model %v %q", step, ok, v, had, m)
				}
			}
			got := h.AppendRecord(nil)
			if len(got) != h.RecordSize() || h.Len() != len(model) {
				t.Fatalf("step %d: record of %d bytes, RecordSize %d; Len %d, model %d", step, len(got), h.RecordSize(), h.Len(), len(model))
			}
			if h.t == nil && !bytes.Equal(got, rec) {
				t.Fatalf("step %d: the small form's record differs from the record edits'", step)
			}
			if step%1000 == 0 {
				fields, err := Decode(nil, got)
				if err != nil || len(fields) != len(model) {
					t.Fatalf("step %d: record decodes to %d fields (%v), model %d", step, len(fields), err, len(model))
				}
				for _, fl := range fields {
					if model[string(fl.Name)] != string(fl.Value) {
						t.Fatalf("step %d: record has %s=%s", step, fl.Name, fl.Value)
					}
				}
				l, err := LoadHash(got)
				if err != nil || !bytes.Equal(l.AppendRecord(nil), got) {
					t.Fatalf("step %d: LoadHash: %v", step, err)
				}
			}
		}
		if long && h.t == nil || !long && len(model) > SmallFields && h.t == nil {
			t.Fatalf("long %v: %d fields, still small", long, len(model))
		}
	}
}

// TestHashHeapBytes is VH10: HeapBytes is what the heap grows by, within
// 2%, for hashes of 10,000 fields and of 100.
func TestHashHeapBytes(t *testing.T) {
	for _, n := range []int{100, 10000} {
		hashes := 1000000 / n
		hs := make([]*Hash, hashes) // before the reading: the array is not the hashes'
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range hs {
			hs[i] = NewHash()
			for j := range n {
				hs[i].Put([]byte(fmt.Sprintf("field:%06d", j)), []byte("v12"))
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		grew := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(hashes)
		got := float64(hs[0].HeapBytes())
		if got < grew*0.98 || got > grew*1.02 {
			t.Fatalf("%d fields: HeapBytes %.0f, the heap grew %.0f a hash", n, got, grew)
		}
		t.Logf("%d fields: %.1f heap bytes a field", n, got/float64(n))
		runtime.KeepAlive(hs)
	}
}
