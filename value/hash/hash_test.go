package hash

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestEncodeDecode (VH1): what Encode writes decodes to the same fields
// in the same order, and Size is its exact length.
func TestEncodeDecode(t *testing.T) {
	for _, fields := range [][]Field{
		nil,
		{{Name: []byte("a"), Value: []byte("1")}},
		{{Name: []byte("a"), Value: []byte("1")}, {Name: []byte(""), Value: []byte("")}, {Name: []byte(strings.Repeat("f", 300)), Value: []byte(strings.Repeat("v", 200))}},
		{{Name: []byte("a"), Value: []byte("1"), Expiry: 1}, {Name: []byte("b"), Value: []byte("2")}, {Name: []byte("c"), Value: []byte("3"), Expiry: MaxExpiry}},
	} {
		rec := Encode(nil, fields)
		if len(rec) != Size(fields) {
			t.Fatalf("Size %d, encoded %d", Size(fields), len(rec))
		}
		got, err := Decode(nil, rec)
		if err != nil || len(got) != len(fields) {
			t.Fatalf("decode: %v, %d fields", err, len(got))
		}
		for i := range fields {
			if string(got[i].Name) != string(fields[i].Name) || string(got[i].Value) != string(fields[i].Value) || got[i].Expiry != fields[i].Expiry {
				t.Fatalf("field %d: %q=%q, want %q=%q", i, got[i].Name, got[i].Value, fields[i].Name, fields[i].Value)
			}
		}
		if n, err := Check(rec); err != nil || n != len(fields) {
			t.Fatalf("Check: %d, %v", n, err)
		}
		if Empty(rec) != (len(fields) == 0) {
			t.Fatalf("Empty(%q) = %v", rec, Empty(rec))
		}
	}
}

// TestCorruptRecords (VH2): every truncation, a trailing byte and an
// unknown version are refused with ErrCorrupt by each reader, never a
// panic.
func TestCorruptRecords(t *testing.T) {
	var bad [][]byte
	for _, rec := range [][]byte{
		Encode(nil, []Field{{Name: []byte("a"), Value: []byte("1")}, {Name: []byte("bb"), Value: []byte(strings.Repeat("v", 200))}}),
		Encode(nil, []Field{{Name: []byte("a"), Value: []byte("1"), Expiry: 1 << 40}, {Name: []byte("bb"), Value: []byte(strings.Repeat("v", 200))}}),
	} {
		for n := 0; n < len(rec); n++ {
			bad = append(bad, rec[:n])
		}
		bad = append(bad, append(append([]byte(nil), rec...), 0))
		v9 := append([]byte(nil), rec...)
		v9[0] = 9
		bad = append(bad, v9)
	}
	// An expiry past maxExpiry.
	bad = append(bad, append(append([]byte{VersionTTL, 1, 1, 'a', 1, '1'}, bytes.Repeat([]byte{0xff}, 9)...), 1))
	for _, b := range bad {
		if b == nil {
			continue // nil is the empty hash of Get, Put and Remove
		}
		if _, err := Decode(nil, b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode(%q): %v", b, err)
		}
		if _, err := Check(b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Check(%q): %v", b, err)
		}
		if _, _, _, err := Live(nil, b, 1, true); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Live(%q): %v", b, err)
		}
		if _, _, err := Get(b, []byte("zz")); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Get(%q): %v", b, err)
		}
		if _, _, err := Put(nil, b, []byte("zz"), []byte("1"), Limits{MaxFields: 10}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Put(%q): %v", b, err)
		}
		if _, _, err := Remove(nil, b, []byte("zz")); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Remove(%q): %v", b, err)
		}
	}
}

// FuzzDecode (VH2): any bytes decode or are refused, and what decodes
// encodes back to bytes that decode.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(nil, []Field{{Name: []byte("a"), Value: []byte("1")}}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(Encode(nil, []Field{{Name: []byte("a"), Value: []byte("1"), Expiry: 1 << 40}, {Name: []byte("b")}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		fields, err := Decode(nil, b)
		if err != nil {
			return
		}
		if again := Encode(nil, fields); string(again) != string(b) {
			// A count or length may be written with more bytes than it needs.
			if _, err := Decode(nil, again); err != nil {
				t.Fatalf("re-encoding does not decode: %v", err)
			}
		}
	})
}

// TestEditsMatchDecode (VH3): random Puts and Removes on a record give
// byte for byte the record that Set or Delete on the decoded fields,
// encoded, gives; Get finds what Find finds.
func TestEditsMatchDecode(t *testing.T) {
	for _, ttl := range []bool{false, true} {
		editsMatchDecode(t, ttl)
	}
}

// editsMatchDecode runs TestEditsMatchDecode's steps from an empty hash
// or, with ttl, from a record of the second version whose fields have
// expiries (PutKeepTTL keeps them, Put clears them).
func editsMatchDecode(t *testing.T, ttl bool) {
	r := rand.New(rand.NewPCG(32, 6))
	var rec []byte // nil: the empty hash
	var fields []Field
	if ttl {
		for j := range 40 {
			fields = append(fields, Field{Name: []byte(fmt.Sprint("f", j)), Value: []byte("x"), Expiry: int64(j+1) * 1000})
		}
		rec = Encode(nil, fields)
	}
	lim := Limits{MaxFields: 1000}
	for i := range 5000 {
		name := []byte(fmt.Sprint("f", r.IntN(40)))
		if ttl && r.IntN(4) == 0 {
			value := []byte(fmt.Sprint(i))
			out, added, err := PutKeepTTL(nil, rec, name, value, lim)
			j := Find(fields, name)
			if err != nil || added != (j < 0) {
				t.Fatalf("step %d: PutKeepTTL %s: %v, added %v", i, name, err, added)
			}
			if j < 0 {
				fields = append(fields, Field{Name: name, Value: value})
			} else {
				fields[j].Value = value
			}
			rec = out
		} else if r.IntN(3) == 0 {
			out, removed, err := Remove(nil, rec, name)
			var n int
			fields, n = Delete(fields, [][]byte{name})
			if err != nil || removed != (n == 1) {
				t.Fatalf("step %d: Remove %s: %v, removed %v, Delete removed %d", i, name, err, removed, n)
			}
			if removed {
				rec = out
			}
		} else {
			value := bytes.Repeat([]byte{byte('a' + i%26)}, r.IntN(300))
			out, added, err := Put(nil, rec, name, value, lim)
			var n int
			fields, n = Set(fields, [][]byte{name, value})
			if err != nil || added != (n == 1) {
				t.Fatalf("step %d: Put %s: %v, added %v, Set added %d", i, name, err, added, n)
			}
			rec = out
		}
		want := Encode(nil, fields)
		if ttl && !HasTTL(want) { // every expiry cleared: edits keep the second version
			want, _ = reencodeTTL(fields)
		}
		if rec != nil && !bytes.Equal(rec, want) {
			t.Fatalf("step %d: record %q, want %q", i, rec, want)
		}
		probe := []byte(fmt.Sprint("f", r.IntN(40)))
		v, found, err := Get(rec, probe)
		j := Find(fields, probe)
		if err != nil || found != (j >= 0) || found && !bytes.Equal(v, fields[j].Value) {
			t.Fatalf("step %d: Get %s = %q, %v, %v; Find %d", i, probe, v, found, err, j)
		}
	}
}

// TestPutLimits (VH4): a Put past MaxFields or MaxBytes is refused with a
// LimitError before dst grows, and a Put within them is not.
func TestPutLimits(t *testing.T) {
	rec := Encode(nil, []Field{{Name: []byte("a"), Value: []byte("1")}, {Name: []byte("b"), Value: []byte("2")}})
	lim := Limits{MaxFields: 2, MaxBytes: 64}
	dst := make([]byte, 0, 1)
	out, _, err := Put(dst, rec, []byte("c"), []byte("3"), lim)
	var le *LimitError
	if !errors.As(err, &le) || !le.Fields || le.N != 3 || le.Limit != 2 || cap(out) != 1 {
		t.Fatalf("a third field: %v (%+v), cap %d", err, le, cap(out))
	}
	out, _, err = Put(dst, rec, []byte("a"), bytes.Repeat([]byte("x"), 60), lim)
	if !errors.As(err, &le) || le.Fields || le.N != len(rec)-2+61 || le.Limit != 64 || cap(out) != 1 {
		t.Fatalf("a value past MaxBytes: %v (%+v), cap %d", err, le, cap(out))
	}
	if _, _, err := Put(nil, rec, []byte("a"), []byte("9"), lim); err != nil {
		t.Fatalf("a change within the limits: %v", err)
	}
}

// TestScanStepExactlyOnce (VH5): stepping through a large hash while
// fields are added and removed returns each field present for the whole
// scan exactly once, and about count fields a step.
func TestScanStepExactlyOnce(t *testing.T) {
	var fields []Field
	for i := range 1000 {
		fields = append(fields, Field{Name: []byte(fmt.Sprint("f", i))})
	}
	seen := map[string]int{}
	cursor := uint64(0)
	for step := 0; ; step++ {
		// The hash as it is now: the stable fields and some churn.
		now := append([]Field(nil), fields...)
		for j := range step % 7 {
			now = append(now, Field{Name: []byte(fmt.Sprint("new", step, ":", j))})
		}
		got, next := ScanStep(now, cursor, 25)
		if len(got) > 40 {
			t.Fatalf("step %d returned %d fields for a count of 25", step, len(got))
		}
		for _, f := range got {
			seen[string(f.Name)]++
		}
		if cursor = next; cursor == 0 {
			break
		}
		if step > 1000 {
			t.Fatal("the scan does not end")
		}
	}
	for _, f := range fields {
		if n := seen[string(f.Name)]; n != 1 {
			t.Fatalf("%s returned %d times", f.Name, n)
		}
	}
}

// reencodeTTL encodes fields as a record of the second version even when
// no field has an expiry, as edits of such a record leave it.
func reencodeTTL(fields []Field) ([]byte, error) {
	out := appendHeaderV(nil, len(fields), true)
	for _, f := range fields {
		out = appendChunk(out, f.Name)
		out = appendChunk(out, f.Value)
		out = appendUvarint(out, uint64(f.Expiry))
	}
	_, err := Check(out)
	return out, err
}
