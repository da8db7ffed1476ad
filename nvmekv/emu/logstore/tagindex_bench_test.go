package logstore

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// BenchmarkTagIndex measures the tag index at TIERCACHE_BENCH_ITEMS
// entries (default 10M; 1M under -short), filled from empty with random
// tags as a log's is: a lookup of a present tag and of an absent one
// (every candidate walked, as a Retrieve's CandidateLocked does; slots/op
// is the slots compared), and adds on top of it (growth and splits
// included, amortized).
func BenchmarkTagIndex(b *testing.B) {
	x, tags := benchTagIndex(0)
	n := len(tags)
	b.Logf("%d entries: %.2f bytes each", n, float64(x.bytes())/float64(n))
	walk := func(b *testing.B, tag func(i int) uint32) {
		slots := 0
		for i := 0; b.Loop(); i++ {
			c := x.cands(tag(i))
			for s, _ := c.next(); s != nil; s, _ = c.next() {
			}
			slots += c.p.d + 1
		}
		b.ReportMetric(float64(slots)/float64(b.N), "slots/op")
	}
	b.Run("hit", func(b *testing.B) {
		walk(b, func(i int) uint32 { return tags[(i*7919)%n] })
	})
	b.Run("miss", func(b *testing.B) {
		r := rand.New(rand.NewPCG(35, 2))
		walk(b, func(int) uint32 { return r.Uint32() })
	})
	b.Run("add", func(b *testing.B) {
		r := rand.New(rand.NewPCG(35, 3))
		for i := 0; b.Loop(); i++ {
			x.add(r.Uint32(), mkLoc(i%1000+1, 16, 16*(i/1000%4096), 64))
		}
	})
}

// BenchmarkTagIndexLoad measures loading a checkpoint's inline entries
// (E29): the entries of an index of TIERCACHE_BENCH_ITEMS random tags
// (default 10M; 1M under -short), in the order each writes them, loaded
// into an index sized for them and 1/32 more.
func BenchmarkTagIndexLoad(b *testing.B) {
	x, tags := benchTagIndex(-1)
	n := len(tags)
	ents := make([]tent, 0, n)
	x.each(func(tag uint32, l Loc) { ents = append(ents, mkTent(tag, l)) })
	x = nil
	for b.Loop() {
		y := newTagIndex(n+n/32, testLay, nil)
		for i := range ents {
			y.load(ents[i].tag, ents[i].loc())
		}
		y.finishLoad()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
}

// benchTagIndex is a tag index of TIERCACHE_BENCH_ITEMS random tags
// (default 10M; 1M under -short), and the tags, in the order added; it is
// sized for expected keys, or for the tags when expected < 0.
func benchTagIndex(expected int) (*tagIndex, []uint32) {
	n := 10_000_000
	if testing.Short() {
		n = 1_000_000
	}
	if s := os.Getenv("TIERCACHE_BENCH_ITEMS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if expected < 0 {
		expected = n
	}
	rng := rand.New(rand.NewPCG(35, 1))
	x := newTagIndex(expected, testLay, nil)
	tags := make([]uint32, n)
	for i := range tags {
		tags[i] = rng.Uint32()
		x.add(tags[i], mkLoc(i%1000+1, 16, 16*(i/1000%4096), 64))
	}
	return x, tags
}
