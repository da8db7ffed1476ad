package server

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// zsetOf10k starts a server holding the sorted set z of members
// m:000000000000 to m:000000009999, member i of score i, and returns a
// connection to it.
func zsetOf10k(b *testing.B) *rawConn {
	tc := newTierCache(b)
	_, path := startServerWith(b, tc, nil)
	r := dialRaw(b, path)
	var fill strings.Builder
	for i := range 10000 {
		m := fmt.Sprintf("m:%012d", i)
		s := fmt.Sprint(i)
		fmt.Fprintf(&fill, "*4\r\n$4\r\nZADD\r\n$1\r\nz\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(s), s, len(m), m)
	}
	r.send(fill.String())
	if _, err := io.ReadFull(r.rd.br, make([]byte, 10000*len(":1\r\n"))); err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkZAdd16 measures ZADD moving a random member of a sorted set of
// 10,000 to a random integer score, as scripts/bench-redis's ZADD row
// does, 16 per batch over a Unix socket.
func BenchmarkZAdd16(b *testing.B) {
	r := zsetOf10k(b)
	rnd := rand.New(rand.NewPCG(3, 4))
	batches := make([]string, 64)
	for i := range batches {
		var batch strings.Builder
		for range 16 {
			m := fmt.Sprintf("m:%012d", rnd.IntN(10000))
			s := fmt.Sprintf("%d.5", rnd.IntN(10000)) // never a member's score yet: every ZADD moves one
			fmt.Fprintf(&batch, "*4\r\n$4\r\nZADD\r\n$1\r\nz\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(s), s, len(m), m)
		}
		batches[i] = batch.String()
	}
	buf := make([]byte, 16*len(":0\r\n"))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.send(batches[i%len(batches)])
		i++
		if _, err := io.ReadFull(r.rd.br, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/ZADD")
}

// BenchmarkZRange16 measures ZRANGE z 0 9 WITHSCORES of that sorted set,
// 16 per batch over a Unix socket.
func BenchmarkZRange16(b *testing.B) {
	r := zsetOf10k(b)
	n := len("*20\r\n")
	for i := range 10 {
		n += len(fmt.Sprintf("$14\r\nm:%012d\r\n$1\r\n%d\r\n", i, i))
	}
	batch := strings.Repeat("*5\r\n$6\r\nZRANGE\r\n$1\r\nz\r\n$1\r\n0\r\n$1\r\n9\r\n$10\r\nWITHSCORES\r\n", 16)
	benchBatches(b, r, batch, 16*n, "ZRANGE")
}
