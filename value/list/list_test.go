package list

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestEncodeItems (VL1): Encode then Items gives the same elements in
// order; Size and ItemSize are the encoded lengths.
func TestEncodeItems(t *testing.T) {
	for _, items := range [][][]byte{
		{[]byte("a")},
		{[]byte(""), []byte("b"), nil},
		{bytes.Repeat([]byte("x"), 300), []byte("y")},
	} {
		v := Encode(nil, items)
		body := 0
		for _, it := range items {
			body += ItemSize(it)
		}
		if len(v) != Size(len(items), body) {
			t.Fatalf("Size %d, encoded %d", Size(len(items), body), len(v))
		}
		got, err := Items(nil, v)
		if err != nil || !slices.EqualFunc(got, items, bytes.Equal) {
			t.Fatalf("Items(Encode(%q)) = %q, %v", items, got, err)
		}
		if n, _, err := Header(v); err != nil || n != len(items) {
			t.Fatalf("Header: %d, %v", n, err)
		}
	}
}

// TestCorruptValues (VL2): every truncation, a trailing byte and an
// unknown version are refused with ErrCorrupt.
func TestCorruptValues(t *testing.T) {
	v := Encode(nil, [][]byte{[]byte("a"), bytes.Repeat([]byte("b"), 200)})
	bad := [][]byte{append(append([]byte(nil), v...), 0), append([]byte{9}, v[1:]...)}
	for n := 0; n < len(v); n++ {
		bad = append(bad, v[:n])
	}
	for _, b := range bad {
		if _, err := Items(nil, b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Items(%q): %v", b, err)
		}
	}
}

// FuzzListEncoding (VL2): list values decode to what was encoded, and no
// byte string makes the decoder panic or read out of bounds.
func FuzzListEncoding(f *testing.F) {
	f.Add([]byte("\x01\x02\x01a\x01b"), "x")
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}, "")
	f.Fuzz(func(t *testing.T, raw []byte, s string) {
		items, err := Items(nil, raw)
		if err == nil {
			if got, _ := Items(nil, Encode(nil, items)); len(got) != len(items) {
				t.Fatalf("round trip of %q: %d items, want %d", raw, len(got), len(items))
			}
		}
		if n, body, err := Header(raw); err == nil {
			for _, left := range []bool{true, false} {
				End(n, body, left)
				if n > 0 {
					Pop(nil, nil, n, body, 1, left)
				}
			}
		}
		in := [][]byte{[]byte(s), nil, []byte(s + s)}
		v := Encode(nil, in)
		out, err := Items(nil, v)
		if err != nil || len(out) != 3 || string(out[0]) != s || string(out[2]) != s+s || len(out[1]) != 0 {
			t.Fatalf("encode %q: %q, %v", in, out, err)
		}
		if n, _, _ := Header(v); n != 3 {
			t.Fatalf("header count %d", n)
		}
	})
}

// TestPushPopMatchItems (VL3): random pushes and pops give the values
// that the same changes to a plain slice give, encoded.
func TestPushPopMatchItems(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 7))
	lim := Limits{MaxElements: 1 << 20, MaxBytes: 1 << 30}
	var model [][]byte
	var v []byte // nil: no list
	for step := range 3000 {
		n, body := 0, []byte(nil)
		if v != nil {
			var err error
			if n, body, err = Header(v); err != nil {
				t.Fatal(err)
			}
		}
		left := r.IntN(2) == 0
		if r.IntN(2) == 0 || n == 0 {
			var vals [][]byte
			for range 1 + r.IntN(4) {
				vals = append(vals, []byte(fmt.Sprint(step, ":", strings.Repeat("e", r.IntN(200)))))
			}
			out, length, err := Push(nil, n, body, vals, left, lim)
			if err != nil || length != n+len(vals) {
				t.Fatalf("step %d: Push: %v, length %d", step, err, length)
			}
			if left {
				for _, x := range vals {
					model = append([][]byte{x}, model...)
				}
			} else {
				model = append(model, vals...)
			}
			v = out
		} else {
			k := 1 + r.IntN(n)
			out, popped, err := Pop(nil, nil, n, body, k, left)
			if err != nil {
				t.Fatalf("step %d: Pop: %v", step, err)
			}
			var want [][]byte
			if left {
				want, model = model[:k], model[k:]
			} else {
				for i := range k {
					want = append(want, model[len(model)-1-i])
				}
				model = model[:len(model)-k]
			}
			if !slices.EqualFunc(popped, want, bytes.Equal) {
				t.Fatalf("step %d: popped %q, want %q", step, popped, want)
			}
			if len(model) == 0 != (out == nil) {
				t.Fatalf("step %d: %d left, value %q", step, len(model), out)
			}
			v = out
		}
		if v != nil && !bytes.Equal(v, Encode(nil, model)) {
			t.Fatalf("step %d: value differs from the model's encoding", step)
		}
		if len(model) > 0 {
			n, body, _ := Header(v)
			for _, left := range []bool{true, false} {
				want := model[len(model)-1]
				if left {
					want = model[0]
				}
				if e, err := End(n, body, left); err != nil || !bytes.Equal(e, want) {
					t.Fatalf("step %d: End(left=%v) = %q, want %q", step, left, e, want)
				}
			}
		}
	}
}

// TestPushLimits (VL4): a push past MaxElements or MaxBytes is refused
// with a LimitError before dst grows.
func TestPushLimits(t *testing.T) {
	v := Encode(nil, [][]byte{[]byte("a"), []byte("b")})
	n, body, _ := Header(v)
	dst := make([]byte, 0, 1)
	var le *LimitError
	out, _, err := Push(dst, n, body, [][]byte{[]byte("c")}, true, Limits{MaxElements: 2, MaxBytes: 100})
	if !errors.As(err, &le) || !le.Elements || le.N != 3 || le.Limit != 2 || cap(out) != 1 {
		t.Fatalf("a third element: %v %+v", err, le)
	}
	out, _, err = Push(dst, n, body, [][]byte{bytes.Repeat([]byte("c"), 10)}, false, Limits{MaxElements: 9, MaxBytes: 10})
	if !errors.As(err, &le) || le.Elements || le.N != len(v)+11 || le.Limit != 10 || cap(out) != 1 {
		t.Fatalf("past MaxBytes: %v %+v", err, le)
	}
}

// TestListOps (VL5): Range, Insert, Remove, Positions and Rotate on the
// list a b a c a, as redis-server answers LRANGE, LINSERT, LREM, LPOS and
// LMOVE of one list onto itself.
func TestListOps(t *testing.T) {
	items := func() [][]byte { return [][]byte{[]byte("a"), []byte("b"), []byte("a"), []byte("c"), []byte("a")} }
	str := func(items [][]byte) string { return string(bytes.Join(items, nil)) }
	for _, tc := range []struct {
		start, stop int64
		lo, hi      int
	}{{0, -1, 0, 5}, {1, 2, 1, 3}, {-2, -1, 3, 5}, {-100, 100, 0, 5}, {3, 1, 0, 0}, {5, 9, 0, 0}, {-1, -5, 0, 0}} {
		if lo, hi := Range(tc.start, tc.stop, 5); lo != tc.lo || hi != tc.hi {
			t.Errorf("Range(%d, %d, 5) = [%d, %d), want [%d, %d)", tc.start, tc.stop, lo, hi, tc.lo, tc.hi)
		}
	}
	if got, n := Insert(items(), []byte("c"), []byte("x"), false); str(got) != "abaxca" || n != 6 {
		t.Errorf("Insert before c: %q %d", str(got), n)
	}
	if got, n := Insert(items(), []byte("a"), []byte("x"), true); str(got) != "axbaca" || n != 6 {
		t.Errorf("Insert after a: %q %d", str(got), n)
	}
	if got, n := Insert(items(), []byte("z"), []byte("x"), true); str(got) != "abaca" || n != -1 {
		t.Errorf("Insert without pivot: %q %d", str(got), n)
	}
	for _, tc := range []struct {
		count   int64
		want    string
		removed int
	}{{0, "bc", 3}, {2, "bca", 2}, {-2, "abc", 2}, {-9, "bc", 3}} {
		if got, n := Remove(items(), tc.count, []byte("a")); str(got) != tc.want || n != tc.removed {
			t.Errorf("Remove(%d, a) = %q, %d; want %q, %d", tc.count, str(got), n, tc.want, tc.removed)
		}
	}
	for _, tc := range []struct {
		rank, count, maxlen int64
		want                []int
	}{{1, -1, 0, []int{0}}, {2, -1, 0, []int{2}}, {-1, -1, 0, []int{4}}, {1, 0, 0, []int{0, 2, 4}}, {-1, 2, 0, []int{4, 2}},
		{1, 0, 3, []int{0, 2}}, {4, -1, 0, nil}, {-2, 0, 3, []int{2}}} {
		if got := Positions(nil, items(), []byte("a"), tc.rank, tc.count, tc.maxlen); !slices.Equal(got, tc.want) {
			t.Errorf("Positions(rank %d, count %d, maxlen %d) = %v, want %v", tc.rank, tc.count, tc.maxlen, got, tc.want)
		}
	}
	if got, v, err := Rotate(items()[1:4], false, true); err != nil || str(got) != "cba" || string(v) != "c" {
		t.Errorf("Rotate right to left: %q %q %v", str(got), v, err)
	}
	if _, _, err := Rotate(nil, true, true); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Rotate of no element: %v", err)
	}
}
