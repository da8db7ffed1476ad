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
				rec = deleteBoth(t, step, h, model, rec, f)
			default:
				getBoth(t, step, h, model, f)
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

// TestHashExpiryModel is VH11: a Hash with field expiries behaves as a
// map of (value, expiry) under Put (dropping the expiry), PutKeepTTL,
// Delete, SetExpiry and Purge, small and large; its record is of the
// second version exactly while a field has an expiry, byte for byte what
// Encode gives for its fields, RecordSize and SizeAfter are exact,
// LoadHash reads it back, and the live readers (GetLive, LenLive,
// Expired, MinExpiry) agree with the model at a given now.
func TestHashExpiryModel(t *testing.T) {
	type fv struct {
		v   string
		exp int64
	}
	for _, long := range []bool{false, true} {
		r := rand.New(rand.NewPCG(9, 10))
		h := NewHash()
		model := map[string]fv{}
		for step := range 20000 {
			f := fmt.Sprint("f", r.IntN(300))
			v := fmt.Sprint(r.IntN(1000))
			if long && r.IntN(300) == 0 {
				v = string(bytes.Repeat([]byte("y"), SmallValue+1))
			}
			m, had := model[f]
			switch op := r.IntN(12); {
			case op < 4:
				n, size := h.SizeAfter([]byte(f), []byte(v))
				if added := h.Put([]byte(f), []byte(v)); added == had {
					t.Fatalf("step %d: Put added %v, model had %v", step, added, had)
				}
				model[f] = fv{v, 0}
				if h.Len() != n || h.RecordSize() != size {
					t.Fatalf("step %d: SizeAfter said %d, %d; the hash has %d, %d", step, n, size, h.Len(), h.RecordSize())
				}
			case op < 6:
				h.PutKeepTTL([]byte(f), []byte(v))
				model[f] = fv{v, m.exp}
			case op < 7:
				h.Delete([]byte(f))
				delete(model, f)
			case op < 10:
				if had {
					at := int64(0)
					if r.IntN(4) > 0 {
						at = 1000 + r.Int64N(1<<40)
					}
					h.SetExpiry([]byte(f), at)
					model[f] = fv{m.v, at}
				}
			default:
				now := 1000 + r.Int64N(1<<38)
				want := 0
				for k, m := range model {
					if Expired(m.exp, now) {
						delete(model, k)
						want++
					}
				}
				if got := h.Purge(now); got != want {
					t.Fatalf("step %d: Purge dropped %d, model %d", step, got, want)
				}
			}
			rec := h.AppendRecord(nil)
			fields, err := Decode(nil, rec)
			if err != nil || len(fields) != len(model) || len(rec) != h.RecordSize() {
				t.Fatalf("step %d: record decodes to %d fields (%v), model %d; %d bytes, RecordSize %d", step, len(fields), err, len(model), len(rec), h.RecordSize())
			}
			var minExp int64
			for _, fl := range fields {
				if m := model[string(fl.Name)]; m.v != string(fl.Value) || m.exp != fl.Expiry {
					t.Fatalf("step %d: record has %s=%s@%d, model %v", step, fl.Name, fl.Value, fl.Expiry, m)
				}
				if fl.Expiry != 0 && (minExp == 0 || fl.Expiry < minExp) {
					minExp = fl.Expiry
				}
			}
			if !bytes.Equal(rec, Encode(nil, fields)) || HasTTL(rec) != (minExp != 0) || h.MinExpiry() != minExp {
				t.Fatalf("step %d: record is not Encode's (version %d), MinExpiry %d, model %d", step, rec[0], h.MinExpiry(), minExp)
			}
			if step%500 == 0 {
				now := 1000 + r.Int64N(1<<39)
				live := 0
				for k, m := range model {
					if !Expired(m.exp, now) {
						live++
					}
					if v, ok := h.GetLive([]byte(k), now); ok == Expired(m.exp, now) || ok && string(v) != m.v {
						t.Fatalf("step %d: GetLive %s at %d: %v, model %v", step, k, now, ok, m)
					}
				}
				if h.LenLive(now) != live || h.Len()-h.Expired(now) != live {
					t.Fatalf("step %d: LenLive %d, model %d", step, h.LenLive(now), live)
				}
				l, err := LoadHash(rec)
				if err != nil || !bytes.Equal(l.AppendRecord(nil), rec) || l.RecordSize() != len(rec) {
					t.Fatalf("step %d: LoadHash: %v", step, err)
				}
			}
		}
		if long && h.t == nil {
			t.Fatalf("long: still small")
		}
	}
}

// TestCheckPuts is VH11's limit check: CheckPuts refuses exactly the
// pairs whose Puts would pass the limits at some step.
func TestCheckPuts(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	seen := map[string]int{}
	for step := range 3000 {
		h := NewHash()
		for i := range r.IntN(200) {
			h.Put([]byte(fmt.Sprint("f", r.IntN(300))), []byte(fmt.Sprint(i)))
			if r.IntN(3) == 0 {
				h.SetExpiry([]byte(fmt.Sprint("f", r.IntN(300))), int64(1+r.IntN(1<<30)))
			}
		}
		keep := r.IntN(2) == 0
		var pairs [][]byte
		for range 1 + r.IntN(6) {
			pairs = append(pairs, []byte(fmt.Sprint("f", r.IntN(300))), bytes.Repeat([]byte("v"), r.IntN(80)))
		}
		lim := Limits{MaxFields: h.Len() + r.IntN(4), MaxBytes: h.RecordSize() + r.IntN(400)}
		err := h.CheckPuts(pairs, keep, lim, seen)
		var want error
		for i := 0; i < len(pairs) && want == nil; i += 2 {
			if keep {
				h.PutKeepTTL(pairs[i], pairs[i+1])
			} else {
				h.Put(pairs[i], pairs[i+1])
			}
			want = lim.Check(h.Len(), h.RecordSize())
		}
		if (err == nil) != (want == nil) {
			t.Fatalf("step %d: CheckPuts %v, putting them %v", step, err, want)
		}
	}
}

// TestHashExpireMatchesFields is VH11's expiry changes: on random hashes
// and names, Hash.Expire and Hash.PersistFields give the codes and leave
// the fields (values and expiries, in order) that SetExpiry and Persist
// give on the decoded fields.
func TestHashExpireMatchesFields(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const now = 1 << 30
	for step := range 3000 {
		h := NewHash()
		for i := range r.IntN(300) {
			f := []byte(fmt.Sprint("f", r.IntN(400)))
			h.Put(f, []byte(fmt.Sprint(i)))
			if r.IntN(2) == 0 {
				h.SetExpiry(f, now+1+int64(r.IntN(1000)))
			}
		}
		var names [][]byte
		for range 1 + r.IntN(12) {
			names = append(names, []byte(fmt.Sprint("f", r.IntN(400))))
		}
		fields, _ := Decode(nil, h.AppendRecord(nil))
		var want, got []int64
		if r.IntN(3) == 0 {
			want = Persist(fields, names, nil)
			got = h.PersistFields(names, nil)
		} else {
			at, cond := now-500+int64(r.IntN(2000)), Cond(r.IntN(5))
			fields, want = SetExpiry(fields, names, at, cond, now, nil)
			got = h.Expire(names, at, cond, now, nil)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: codes %v, want %v", step, got, want)
		}
		if rec := h.AppendRecord(nil); !bytes.Equal(rec, Encode(nil, fields)) {
			t.Fatalf("step %d: the hash's record is not the fields'", step)
		}
	}
}

// TestPutLimited is VH11's one-pair limit check: PutLimited refuses
// exactly the Puts (PutKeepTTL with keep) that would take a hash past
// the limits, changing nothing then, and otherwise is the Put.
func TestPutLimited(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for step := range 5000 {
		h, model := NewHash(), NewHash()
		for i := range r.IntN(200) {
			f := []byte(fmt.Sprint("f", r.IntN(300)))
			v := []byte(fmt.Sprint(i))
			h.Put(f, v)
			model.Put(f, v)
			if r.IntN(3) == 0 {
				at := int64(1 + r.IntN(1<<30))
				h.SetExpiry(f, at)
				model.SetExpiry(f, at)
			}
		}
		keep := r.IntN(2) == 0
		f, v := []byte(fmt.Sprint("f", r.IntN(300))), bytes.Repeat([]byte("v"), r.IntN(80))
		lim := Limits{MaxFields: h.Len() + r.IntN(2), MaxBytes: h.RecordSize() + r.IntN(20) - 5}
		before := h.AppendRecord(nil)
		added, err := h.PutLimited(f, v, keep, lim)
		var want bool
		if keep {
			want = model.PutKeepTTL(f, v)
		} else {
			want = model.Put(f, v)
		}
		wantErr := lim.Check(model.Len(), model.RecordSize())
		switch {
		case (err == nil) != (wantErr == nil):
			t.Fatalf("step %d: PutLimited %v, the Put gives %v", step, err, wantErr)
		case err != nil && !bytes.Equal(h.AppendRecord(nil), before):
			t.Fatalf("step %d: a refused PutLimited changed the hash", step)
		case err == nil && (added != want || !bytes.Equal(h.AppendRecord(nil), model.AppendRecord(nil))):
			t.Fatalf("step %d: PutLimited added %v, Put %v; records equal %v", step, added, want, bytes.Equal(h.AppendRecord(nil), model.AppendRecord(nil)))
		}
	}
}

// TestSmallHashIndex is VH13: a small hash's field index names every
// field's entry, through Puts of values of every length, Deletes, and the
// count's second byte (128 fields), and the record stays byte for byte
// what the record edits give.
func TestSmallHashIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	h := NewHash()
	rec := Encode(nil, nil)
	model := map[string]string{}
	indexed, full := 0, 0
	for step := range 30000 {
		f := fmt.Sprint("field:", r.IntN(SmallFields))
		switch op := r.IntN(10); {
		case op < 6 || len(model) < 100 && op < 8 || step/2000 == 5: // steps 10,000 to 11,999 fill it
			v := string(bytes.Repeat([]byte("v"), r.IntN(SmallValue+1)))
			_, had := model[f]
			if added := h.Put([]byte(f), []byte(v)); added == had {
				t.Fatalf("step %d: Put added %v, model had %v", step, added, had)
			}
			model[f] = v
			rec, _, _ = Put(nil, rec, []byte(f), []byte(v), Limits{MaxFields: 1 << 30})
		case op < 9:
			rec = deleteBoth(t, step, h, model, rec, f)
		default:
			getBoth(t, step, h, model, f)
		}
		if h.Len() == SmallFields {
			full++
		}
		if h.t != nil {
			t.Fatalf("step %d: %d fields of at most %d bytes: no longer small", step, len(model), SmallValue)
		}
		if !bytes.Equal(h.AppendRecord(nil), rec) {
			t.Fatalf("step %d: the record differs from the record edits'", step)
		}
		if h.ix.tags == nil {
			continue
		}
		indexed++
		i := 0
		err := Each(h.rec, func(name, _ []byte) bool {
			if i >= len(h.ix.offs) || h.ix.tags[i] != tag(name) || int(h.ix.offs[i]) != entryAt(h.rec, name) {
				return false
			}
			i++
			return true
		})
		if err != nil || i != h.Len() || len(h.ix.offs) != i || len(h.ix.tags) != i {
			t.Fatalf("step %d: the index names %d of %d fields right (%d offsets, %d tags)", step, i, h.Len(), len(h.ix.offs), len(h.ix.tags))
		}
	}
	if indexed == 0 || full == 0 {
		t.Fatalf("the hash was indexed at %d steps, had %d fields at %d", indexed, SmallFields, full)
	}
}

// entryAt is the offset of name's entry in rec (a small form's record).
func entryAt(rec, name []byte) int {
	s, _, _ := locate(rec, name)
	return s.start
}

// deleteBoth deletes f from h, the model and rec (the record edits'
// model), and returns rec.
func deleteBoth(t *testing.T, step int, h *Hash, model map[string]string, rec []byte, f string) []byte {
	t.Helper()
	_, had := model[f]
	if got := h.Delete([]byte(f)); got != had {
		t.Fatalf("step %d: Delete %v, model %v", step, got, had)
	}
	delete(model, f)
	if out, removed, _ := Remove(nil, rec, []byte(f)); removed {
		return out
	}
	return rec
}

// getBoth checks h's value of f against the model's.
func getBoth(t *testing.T, step int, h *Hash, model map[string]string, f string) {
	t.Helper()
	v, ok := h.Get([]byte(f))
	if m, had := model[f]; ok != had || string(v) != m {
		t.Fatalf("step %d: Get %v %q, model %v %q", step, ok, v, had, m)
	}
}
