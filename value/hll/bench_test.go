package hll

import (
	"strconv"
	"testing"
)

// BenchmarkAdd: one PFADD of one element to a sparse (about 1 KB) and a
// dense HyperLogLog, the copy Add makes included.
func BenchmarkAdd(b *testing.B) {
	for _, n := range []int{500, 20000} {
		v, _, _ := Add(nil, elems("b", n), DefaultSparseMaxBytes)
		b.Run(map[bool]string{true: "dense", false: "sparse"}[IsDense(v)], func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			e := [][]byte{nil}
			for i := 0; b.Loop(); i++ {
				e[0] = []byte(strconv.Itoa(i))
				Add(v, e, DefaultSparseMaxBytes)
			}
		})
	}
}

// BenchmarkCount: PFCOUNT's computation over a dense HyperLogLog.
func BenchmarkCount(b *testing.B) {
	v, _, _ := Add(nil, elems("c", 20000), DefaultSparseMaxBytes)
	b.ReportAllocs()
	for b.Loop() {
		Count(v)
	}
}
