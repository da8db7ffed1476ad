package zset

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/value/set"
)

func entries(kv ...any) *Entries {
	z := &Entries{}
	for i := 0; i+1 < len(kv); i += 2 {
		z.Put([]byte(kv[i].(string)), kv[i+1].(float64))
	}
	return z
}

// TestEncodeDecode (VZ1): a record decodes to the same entries in Redis's
// order, and Size is its length.
func TestEncodeDecode(t *testing.T) {
	z := entries("b", 1.0, "a", 1.0, "c", -2.5, strings.Repeat("x", 300), math.Inf(1), "n", math.Inf(-1))
	rec := z.AppendRecord(nil)
	if len(rec) != z.Size() {
		t.Fatalf("Size %d, record %d", z.Size(), len(rec))
	}
	var got Entries
	if err := got.Decode(rec); err != nil {
		t.Fatal(err)
	}
	want := []string{"n", "c", "a", "b", strings.Repeat("x", 300)}
	for i, e := range got.All() {
		if string(e.Member) != want[i] {
			t.Fatalf("entry %d is %q, want %q", i, e.Member, want[i])
		}
	}
	head, total, err := Head(nil, rec, 2)
	if err != nil || total != 5 || len(head) != 2 || string(head[1].Member) != "c" {
		t.Fatalf("Head: %v %d %v", head, total, err)
	}
}

// TestCorruptRecords (VZ2): truncations, a trailing byte, entries out of
// order, a NaN and an unknown version are refused with ErrCorrupt.
func TestCorruptRecords(t *testing.T) {
	rec := entries("a", 1.0, "b", 2.0).AppendRecord(nil)
	var bad [][]byte
	for n := 0; n < len(rec); n++ {
		bad = append(bad, rec[:n])
	}
	bad = append(bad, append(slices.Clone(rec), 0))
	v9 := slices.Clone(rec)
	v9[0] = 9
	swapped := FromSorted([]Entry{{[]byte("b"), 2}, {[]byte("a"), 1}}).AppendRecord(nil)
	nan := FromSorted([]Entry{{[]byte("a"), math.NaN()}}).AppendRecord(nil)
	bad = append(bad, v9, swapped, nan)
	for _, b := range bad {
		var z Entries
		if err := z.Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode(%q): %v", b, err)
		}
	}
}

// FuzzDecode (VZ2): no input panics Decode, and what decodes encodes back
// to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(entries("a", 1.0, "b", 2.0).AppendRecord(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var z Entries
		if z.Decode(b) == nil && !bytes.Equal(z.AppendRecord(nil), b) {
			t.Fatalf("%q decodes but encodes differently", b)
		}
		Head(nil, b, 3)
	})
}

// TestEntriesModel (VZ3): after random Puts and Removes, Score, Rank, At
// and the score and rank spans agree with a sorted map.
func TestEntriesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	z := &Entries{}
	model := map[string]float64{}
	for i := 0; i < 3000; i++ {
		k := fmt.Sprint(r.IntN(60))
		if r.IntN(3) == 0 {
			if z.Remove([]byte(k)) != (func() bool { _, ok := model[k]; return ok })() {
				t.Fatalf("Remove(%s)", k)
			}
			delete(model, k)
			continue
		}
		s := float64(r.IntN(10)) / 2
		_, had := model[k]
		if z.Put([]byte(k), s) == had {
			t.Fatalf("Put(%s) new = %v", k, !had)
		}
		model[k] = s
	}
	var sorted []Entry
	for k, s := range model {
		sorted = append(sorted, Entry{[]byte(k), s})
	}
	slices.SortFunc(sorted, Compare)
	if z.Len() != len(sorted) {
		t.Fatalf("Len %d, want %d", z.Len(), len(sorted))
	}
	for i, e := range sorted {
		if got := z.At(i); string(got.Member) != string(e.Member) || got.Score != e.Score {
			t.Fatalf("At(%d) = %v, want %v", i, got, e)
		}
		if r, ok := z.Rank(e.Member); !ok || r != i {
			t.Fatalf("Rank(%s) = %d", e.Member, r)
		}
		if s, ok := z.Score(e.Member); !ok || s != e.Score {
			t.Fatalf("Score(%s) = %v", e.Member, s)
		}
	}
	for range 200 {
		rg := ScoreRange{Min: float64(r.IntN(12))/2 - 0.5, Max: float64(r.IntN(12))/2 - 0.5, MinEx: r.IntN(2) == 0, MaxEx: r.IntN(2) == 0}
		lo, hi := ScoreSpan(z, rg)
		want := 0
		for _, e := range sorted {
			if rg.aboveMin(e.Score) && rg.belowMax(e.Score) {
				want++
			}
		}
		if hi-lo != want {
			t.Fatalf("ScoreSpan %+v: %d entries, want %d", rg, hi-lo, want)
		}
	}
}

// TestCombine (VZ4): weights, SUM/MIN/MAX and NaN as redis-server
// computes them, a plain set read with scores 1.
func TestCombine(t *testing.T) {
	a := entries("x", 1.0, "y", math.Inf(1), "z", 3.0)
	b := entries("y", math.Inf(-1), "z", 5.0)
	s := &set.Members{}
	s.Add([]byte("z"))
	s.Add([]byte("w"))
	var out Entries
	Combine(&out, []Source{{a, 1}, {b, 1}}, Union, Sum, 0)
	got := map[string]float64{}
	for _, e := range out.All() {
		got[string(e.Member)] = e.Score
	}
	if got["x"] != 1 || got["y"] != 0 || got["z"] != 8 {
		t.Fatalf("union sum: %v", got)
	}
	Combine(&out, []Source{{a, 2}, {b, 1}, {FromSet(s), 10}}, Inter, Max, 0)
	if out.Len() != 1 || out.At(0).Score != 10 {
		t.Fatalf("inter max: %v", out.All())
	}
	Combine(&out, []Source{{a, 0}, {b, 1}}, Inter, Min, 0)
	if out.Len() != 2 || out.At(0).Score != math.Inf(-1) {
		t.Fatalf("inter min with 0×inf: %v", out.All())
	}
	if n := Combine(&out, []Source{{a, 1}, {b, 1}}, Inter, Sum, 1); n != 1 {
		t.Fatalf("inter limit 1: %d", n)
	}
	Combine(&out, []Source{{a, 1}, {b, 1}}, Diff, Sum, 0)
	if out.Len() != 1 || string(out.At(0).Member) != "x" {
		t.Fatalf("diff: %v", out.All())
	}
}

// TestLimits (VZ5): the server checks a sorted set's size with
// set.Limits, as a set's, from Len and Size.
func TestLimits(t *testing.T) {
	z := entries("a", 1.0, "b", 2.0, "c", 3.0)
	if err := (set.Limits{MaxMembers: 2}).Check(z.Len(), z.Size()); err == nil {
		t.Fatal("3 members passed a bound of 2")
	}
	if err := (set.Limits{MaxMembers: 3, MaxBytes: z.Size() - 1}).Check(z.Len(), z.Size()); err == nil {
		t.Fatal("a record past MaxBytes passed")
	}
}
