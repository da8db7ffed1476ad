package set

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func members(ss ...string) *Members {
	m := &Members{}
	for _, s := range ss {
		m.Add([]byte(s))
	}
	return m
}

func strs(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// TestEncodeDecode (VS1): a record decodes to the same members in
// ascending order, and Size is its length.
func TestEncodeDecode(t *testing.T) {
	for _, in := range [][]string{{}, {"a"}, {"b", "a", "", strings.Repeat("x", 300), "10", "9"}} {
		m := members(in...)
		rec := m.AppendRecord(nil)
		if len(rec) != m.Size() {
			t.Fatalf("Size %d, record %d bytes", m.Size(), len(rec))
		}
		var got Members
		if err := got.Decode(rec); err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(slices.Values(in))
		if !slices.Equal(strs(got.All()), want) {
			t.Fatalf("decoded %q, want %q", strs(got.All()), want)
		}
	}
}

// TestCorruptRecords (VS2): truncations, a trailing byte, members out of
// order and an unknown version are refused with ErrCorrupt.
func TestCorruptRecords(t *testing.T) {
	rec := members("a", "bb", strings.Repeat("c", 200)).AppendRecord(nil)
	var bad [][]byte
	for n := 0; n < len(rec); n++ {
		bad = append(bad, rec[:n])
	}
	bad = append(bad, append(slices.Clone(rec), 0))
	v9 := slices.Clone(rec)
	v9[0] = 9
	unordered := []byte{Version, 2, 1, 'b', 1, 'a'}
	repeated := []byte{Version, 2, 1, 'a', 1, 'a'}
	bad = append(bad, v9, unordered, repeated)
	for _, b := range bad {
		var m Members
		if err := m.Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode(%q): %v", b, err)
		}
	}
}

// FuzzDecode (VS2): no input panics Decode, and what decodes encodes back
// to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(members("a", "b").AppendRecord(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Members
		if m.Decode(b) == nil && !bytes.Equal(m.AppendRecord(nil), b) {
			t.Fatalf("%q decodes but encodes as %q", b, m.AppendRecord(nil))
		}
	})
}

// TestMembersModel (VS3): Add, Remove and Has agree with a map, and Each
// visits the members in ascending order.
func TestMembersModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var m Members
	model := map[string]bool{}
	for i := 0; i < 5000; i++ {
		k := fmt.Sprint(r.IntN(200))
		switch r.IntN(3) {
		case 0:
			if got := m.Add([]byte(k)); got == model[k] {
				t.Fatalf("Add(%s) = %v with model %v", k, got, model[k])
			}
			model[k] = true
		case 1:
			if got := m.Remove([]byte(k)); got != model[k] {
				t.Fatalf("Remove(%s) = %v", k, got)
			}
			delete(model, k)
		default:
			if m.Has([]byte(k)) != model[k] {
				t.Fatalf("Has(%s)", k)
			}
		}
	}
	var each []string
	m.Each(func(b []byte) bool { each = append(each, string(b)); return true })
	if want := slices.Sorted(maps.Keys(model)); !slices.Equal(each, want) || m.Len() != len(want) {
		t.Fatalf("Each %q, want %q", each, want)
	}
}

// TestAlgebraModel (VS4): Inter, Union and Diff give what a model of sets
// gives.
func TestAlgebraModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 300; round++ {
		var sets []Set
		var models []map[string]bool
		for range 1 + r.IntN(4) {
			m, model := &Members{}, map[string]bool{}
			for range r.IntN(12) {
				k := fmt.Sprint(r.IntN(15))
				m.Add([]byte(k))
				model[k] = true
			}
			sets, models = append(sets, m), append(models, model)
		}
		var inter, union, diff []string
		for k := range 15 {
			s := fmt.Sprint(k)
			in, any, other := true, false, false
			for i, m := range models {
				in = in && m[s]
				any = any || m[s]
				other = other || i > 0 && m[s]
			}
			if in {
				inter = append(inter, s)
			}
			if any {
				union = append(union, s)
			}
			if models[0][s] && !other {
				diff = append(diff, s)
			}
		}
		slices.Sort(inter)
		slices.Sort(union)
		slices.Sort(diff)
		var u Members
		Union(&u, sets)
		if got := strs(Inter(nil, sets)); !slices.Equal(got, inter) {
			t.Fatalf("Inter %q, want %q", got, inter)
		}
		if got := strs(u.All()); !slices.Equal(got, union) {
			t.Fatalf("Union %q, want %q", got, union)
		}
		if got := strs(Diff(nil, sets)); !slices.Equal(got, diff) {
			t.Fatalf("Diff %q, want %q", got, diff)
		}
		if got := InterCard(sets, 0); got != len(inter) {
			t.Fatalf("InterCard %d, want %d", got, len(inter))
		}
	}
}

// TestScanStepExactlyOnce (VS5): a member present for a whole scan comes
// back exactly once, whatever changes between steps.
func TestScanStepExactlyOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m := &Members{}
	for i := range 500 {
		m.Add([]byte(fmt.Sprint("m", i)))
	}
	stay := map[string]int{}
	for i := range 250 {
		stay[fmt.Sprint("m", i)] = 0
	}
	var cursor uint64
	for {
		var got [][]byte
		got, cursor = ScanStep(nil, m.All(), func(b []byte) []byte { return b }, cursor, 10)
		for _, b := range got {
			if _, ok := stay[string(b)]; ok {
				stay[string(b)]++
			}
		}
		for range 5 {
			k := fmt.Sprint("m", 250+r.IntN(500))
			if r.IntN(2) == 0 {
				m.Add([]byte(k))
			} else {
				m.Remove([]byte(k))
			}
		}
		if cursor == 0 {
			break
		}
	}
	for k, n := range stay {
		if n != 1 {
			t.Fatalf("%s came back %d times", k, n)
		}
	}
}

// TestLimits (VS6): a set past its bounds is refused with a *LimitError.
func TestLimits(t *testing.T) {
	l := Limits{MaxMembers: 2, MaxBytes: 10}
	var le *LimitError
	if err := l.Check(3, 5); !errors.As(err, &le) || !le.Members {
		t.Fatalf("3 members: %v", err)
	}
	if err := l.Check(2, 11); !errors.As(err, &le) || le.Members {
		t.Fatalf("11 bytes: %v", err)
	}
	if err := l.Check(2, 10); err != nil {
		t.Fatal(err)
	}
}
