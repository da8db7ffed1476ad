package zset

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestSortedModel is VZ6: a Sorted answers as Entries does (the decoded
// record, VZ3) under the same Put, Remove and RemoveRanks, -0 handling
// included: Score, Rank, At, EachRank and the spans agree, its record is the one
// Entries builds, Size is its length, and LoadSorted reads it back.
func TestSortedModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	z := NewSorted()
	var model Entries
	score := func() float64 {
		switch r.IntN(20) {
		case 0:
			return math.Copysign(0, -1)
		case 1:
			return math.Inf(1 - 2*r.IntN(2))
		}
		return float64(r.IntN(50)) / 4
	}
	member := func() []byte {
		m := []byte(fmt.Sprint("m", r.IntN(1500)))
		if r.IntN(200) == 0 {
			m = append(m, bytes.Repeat([]byte("x"), SmallMember)...)
		}
		return m
	}
	for step := range 40000 {
		m := member()
		switch op := r.IntN(10); {
		case op < 5:
			s := score()
			if got, want := z.Put(m, s), model.Put(m, s); got != want {
				t.Fatalf("step %d: Put(%s, %v) %v, model %v", step, m, s, got, want)
			}
		case op < 8:
			if got, want := z.Remove(m), model.Remove(m); got != want {
				t.Fatalf("step %d: Remove(%s) %v, model %v", step, m, got, want)
			}
		case op < 9 && model.Len() > 0:
			lo := r.IntN(model.Len())
			hi := lo + r.IntN(min(5, model.Len()-lo)+1)
			z.RemoveRanks(lo, hi)
			model.RemoveRanks(lo, hi)
		default:
			s1, ok1 := z.Score(m)
			s2, ok2 := model.Score(m)
			r1, _ := z.Rank(m)
			r2, _ := model.Rank(m)
			if ok1 != ok2 || math.Float64bits(s1) != math.Float64bits(s2) || ok1 && r1 != r2 {
				t.Fatalf("step %d: Score/Rank(%s) %v %v %d, model %v %v %d", step, m, s1, ok1, r1, s2, ok2, r2)
			}
		}
		if z.Len() != model.Len() {
			t.Fatalf("step %d: Len %d, model %d", step, z.Len(), model.Len())
		}
		if step%500 == 0 && model.Len() > 0 {
			for range 20 {
				i := r.IntN(model.Len())
				a, b := z.At(i), model.At(i)
				if !bytes.Equal(a.Member, b.Member) || math.Float64bits(a.Score) != math.Float64bits(b.Score) {
					t.Fatalf("step %d: At(%d) %s %v, model %s %v", step, i, a.Member, a.Score, b.Member, b.Score)
				}
			}
			lo := r.IntN(model.Len())
			hi := lo + r.IntN(min(300, model.Len()-lo)+1)
			for _, rev := range []bool{false, true} {
				i := lo
				if rev {
					i = hi - 1
				}
				z.EachRank(lo, hi, rev, func(a Entry) {
					b := model.At(i)
					if !bytes.Equal(a.Member, b.Member) || math.Float64bits(a.Score) != math.Float64bits(b.Score) {
						t.Fatalf("step %d: EachRank(%d, %d, %v) at %d: %s %v, model %s %v", step, lo, hi, rev, i, a.Member, a.Score, b.Member, b.Score)
					}
					if rev {
						i--
					} else {
						i++
					}
				})
				if rev && i != lo-1 || !rev && i != hi {
					t.Fatalf("step %d: EachRank(%d, %d, %v) stopped at %d", step, lo, hi, rev, i)
				}
			}
			sr := ScoreRange{Min: 2, Max: 7}
			if l1, h1 := ScoreSpan(z, sr); true {
				if l2, h2 := ScoreSpan(&model, sr); l1 != l2 || h1 != h2 {
					t.Fatalf("step %d: ScoreSpan %d,%d, model %d,%d", step, l1, h1, l2, h2)
				}
			}
			rec := z.AppendRecord(nil)
			if want := model.AppendRecord(nil); !bytes.Equal(rec, want) || len(rec) != z.Size() {
				t.Fatalf("step %d: record of %d bytes (Size %d), Entries gives %d", step, len(rec), z.Size(), len(want))
			}
			back, err := LoadSorted(rec)
			if err != nil || !bytes.Equal(back.AppendRecord(nil), rec) {
				t.Fatalf("step %d: LoadSorted: %v", step, err)
			}
		}
	}
}

// TestSortedHeapBytes is VZ7: HeapBytes is within 2% of what the heap
// grows by, for sorted sets of 10,000 members added at random scores and
// of 10.
func TestSortedHeapBytes(t *testing.T) {
	for _, n := range []int{10, 10000} {
		zsets := 1000000 / n
		zs := make([]*Sorted, zsets)
		r := rand.New(rand.NewPCG(1, 2))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range zs {
			zs[i] = NewSorted()
			for j := range n {
				zs[i].Put([]byte(fmt.Sprintf("m:%d", j)), float64(r.IntN(1<<20)))
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		grew := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(zsets)
		got := float64(zs[0].HeapBytes())
		if got < grew*0.98 || got > grew*1.02 {
			t.Fatalf("%d members: HeapBytes %.0f, the heap grew %.0f a sorted set", n, got, grew)
		}
		t.Logf("%d members: %.1f heap bytes a member", n, got/float64(n))
		runtime.KeepAlive(zs)
	}
}

// BenchmarkSortedPut moves a random member of a sorted set of 10,000 to a
// random integer score, as scripts/bench-redis's ZADD does.
func BenchmarkSortedPut(b *testing.B) {
	z := NewSorted()
	ms := make([][]byte, 10000)
	for i := range ms {
		ms[i] = fmt.Appendf(nil, "m:%012d", i)
		z.Put(ms[i], float64(i))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		z.Put(ms[r.IntN(len(ms))], float64(r.IntN(10000)))
	}
}
