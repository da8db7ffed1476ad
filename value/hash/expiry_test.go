package hash

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRecordVersions (VH6): a hash none of whose fields has an expiry is
// written in the first version, byte for byte as before field expiry
// existed; one with an expiry in the second, which keeps each expiry; both
// decode.
func TestRecordVersions(t *testing.T) {
	plain := []Field{{Name: []byte("a"), Value: []byte("1")}, {Name: []byte("bc"), Value: []byte("22")}}
	old := []byte{1, 2, 1, 'a', 1, '1', 2, 'b', 'c', 2, '2', '2'} // a record written before VersionTTL
	if got := Encode(nil, plain); !bytes.Equal(got, old) {
		t.Fatalf("a hash without expiries encodes to %v, want %v", got, old)
	}
	withTTL := []Field{{Name: []byte("a"), Value: []byte("1"), Expiry: 300}, {Name: []byte("bc"), Value: []byte("22")}}
	want := []byte{2, 2, 1, 'a', 1, '1', 0xac, 0x02, 2, 'b', 'c', 2, '2', '2', 0}
	if got := Encode(nil, withTTL); !bytes.Equal(got, want) || !HasTTL(got) || HasTTL(old) {
		t.Fatalf("a hash with an expiry encodes to %v, want %v", got, want)
	}
	got, err := Decode(nil, want)
	if err != nil || len(got) != 2 || got[0].Expiry != 300 || got[1].Expiry != 0 {
		t.Fatalf("decode: %+v, %v", got, err)
	}
}

// modelField is a field of the model hash.
type modelField struct {
	value string
	exp   int64
}

// TestLive (VH7): Live gives exactly the fields not expired at now, in
// order, with their expiries when asked to keep them (of the first
// version otherwise), the earliest expiry left and the count dropped; a
// record with nothing to drop comes back as it is.
func TestLive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 4))
	for i := range 2000 {
		var fields []Field
		for j := range r.IntN(12) {
			f := Field{Name: []byte(fmt.Sprint("f", j)), Value: []byte(fmt.Sprint(i, j))}
			if r.IntN(2) == 0 {
				f.Expiry = int64(1 + r.IntN(20))
			}
			fields = append(fields, f)
		}
		rec := Encode(nil, fields)
		now := int64(r.IntN(22))
		for _, keep := range []bool{false, true} {
			out, minExp, expired, err := Live(nil, rec, now, keep)
			if err != nil {
				t.Fatal(err)
			}
			var want []Field
			var wantMin int64
			for _, f := range fields {
				if Expired(f.Expiry, now) {
					continue
				}
				if f.Expiry != 0 && (wantMin == 0 || f.Expiry < wantMin) {
					wantMin = f.Expiry
				}
				if !keep {
					f.Expiry = 0
				}
				want = append(want, f)
			}
			if expired != len(fields)-len(want) || minExp != wantMin {
				t.Fatalf("case %d keep %v: expired %d min %d, want %d %d", i, keep, expired, minExp, len(fields)-len(want), wantMin)
			}
			got, err := Decode(nil, out)
			if err != nil || len(got) != len(want) {
				t.Fatalf("case %d: %d fields, %v; want %d", i, len(got), err, len(want))
			}
			for k := range got {
				if string(got[k].Name) != string(want[k].Name) || string(got[k].Value) != string(want[k].Value) || got[k].Expiry != want[k].Expiry {
					t.Fatalf("case %d field %d: %+v, want %+v", i, k, got[k], want[k])
				}
			}
			if expired == 0 && (keep || wantMin == 0) && &out[0] != &rec[0] {
				t.Fatalf("case %d: nothing to drop, but Live copied the record", i)
			}
		}
	}
}

// TestSetExpiryModel (VH8): random HEXPIRE (every condition, past and
// future times), HPERSIST, HSET and expiry by time on fields give the
// codes and the fields a plain map of (value, expiry) gives, as Redis
// 7.4's documentation and hexpireGenericCommand define them.
func TestSetExpiryModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	model := map[string]modelField{}
	var fields []Field
	now := int64(1000)
	for step := range 20000 {
		names := [][]byte{}
		n, space := 1+r.IntN(3), 8
		if step%10 == 0 { // many names over a larger hash: SetExpiry's and Persist's map
			n, space = 12+r.IntN(8), 40
		}
		for range n {
			names = append(names, []byte(fmt.Sprint("f", r.IntN(space))))
		}
		switch r.IntN(5) {
		case 0: // HSET
			v := []byte(fmt.Sprint(step))
			fields, _ = Set(fields, [][]byte{names[0], v})
			model[string(names[0])] = modelField{string(v), 0}
		case 1: // HPERSIST
			codes := Persist(fields, names, nil)
			for k, n := range names {
				m, ok := model[string(n)]
				want := int64(CodeSet)
				switch {
				case !ok:
					want = CodeNoField
				case m.exp == 0:
					want = CodeNoTTL
				}
				model[string(n)] = modelField{m.value, 0}
				if !ok {
					delete(model, string(n))
				}
				if codes[k] != want {
					t.Fatalf("step %d: HPERSIST %s: %d, want %d", step, n, codes[k], want)
				}
			}
		case 2: // time passes
			now += int64(r.IntN(30))
			fields, _ = Purge(fields, now)
			for n, m := range model {
				if Expired(m.exp, now) {
					delete(model, n)
				}
			}
		default: // HEXPIRE with a condition
			at := now - 5 + int64(r.IntN(100))
			cond := Cond(r.IntN(5))
			var codes []int64
			fields, codes = SetExpiry(fields, names, at, cond, now, nil)
			for k, n := range names {
				m, ok := model[string(n)]
				var want int64
				switch {
				case !ok:
					want = CodeNoField
				case cond == CondNX && m.exp != 0, cond == CondXX && m.exp == 0,
					cond == CondGT && (m.exp == 0 || m.exp >= at), cond == CondLT && m.exp != 0 && m.exp <= at:
					want = CodeNotMet
				case at <= now:
					want = CodeDeleted
					delete(model, string(n))
				default:
					want = CodeSet
					model[string(n)] = modelField{m.value, at}
				}
				if codes[k] != want {
					t.Fatalf("step %d: HEXPIRE %s at %d cond %d: %d, want %d", step, n, at, cond, codes[k], want)
				}
			}
		}
		if len(fields) != len(model) {
			t.Fatalf("step %d: %d fields, model %d", step, len(fields), len(model))
		}
		for _, f := range fields {
			if m := model[string(f.Name)]; m.value != string(f.Value) || m.exp != f.Expiry {
				t.Fatalf("step %d: %s = %q exp %d, model %+v", step, f.Name, f.Value, f.Expiry, m)
			}
		}
		// The record round trip keeps everything, and its earliest expiry.
		rec := Encode(nil, fields)
		back, err := Decode(nil, rec)
		if err != nil || len(back) != len(fields) || MinExpiry(back) != MinExpiry(fields) {
			t.Fatalf("step %d: round trip %v", step, err)
		}
	}
}
